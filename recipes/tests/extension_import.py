"""Generic kernel test for an extension wheel: import each of its native modules
(loading its fatbins) and, when the package ships `archbuild_kernel_test()`,
run it on every visible GPU. Usage: extension_import.py PACKAGE [PACKAGE...]"""
import importlib
import pkgutil
import sys

import torch


def main():
    if not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    for name in sys.argv[1:]:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(getattr(package, "__path__", []), name + "."):
            importlib.import_module(module.name)
        test = getattr(package, "archbuild_kernel_test", None)
        if test:
            for index in range(torch.cuda.device_count()):
                test(torch.device("cuda", index))
                print(f"{name}: device {index} ok")
        else:
            print(f"{name}: imported (it defines no archbuild_kernel_test)")
    print("kernel test passed")


if __name__ == "__main__":
    main()
