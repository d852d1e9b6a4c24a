"""Generic kernel test for an extension wheel: import each package the way
its users do (`import PACKAGE`: a package that ships a CPU and a CUDA build
of one op library loads exactly one of them; importing every file would
register its operators twice and abort), then, when the package ships
`archbuild_kernel_test(device)`, run it on every visible GPU. The last line
says exactly what ran. Usage: extension_import.py PACKAGE [PACKAGE...]"""
import importlib
import sys

import torch


def main():
    if not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    launched, imported = [], []
    for name in sys.argv[1:]:
        package = importlib.import_module(name)
        imported.append(name)
        test = getattr(package, "archbuild_kernel_test", None)
        if test:
            for index in range(torch.cuda.device_count()):
                test(torch.device("cuda", index))
                print(f"{name}: device {index} ok")
            launched.append(name)
    gpus = torch.cuda.device_count()
    if launched:
        print(f"kernel test passed: archbuild_kernel_test of {', '.join(launched)} on {gpus} GPU(s); "
              f"imported {', '.join(imported)}")
    else:
        print(f"imported {', '.join(imported)}; no kernel launched (the package defines no archbuild_kernel_test: "
              "a recipe's kernel_test can name one)")


if __name__ == "__main__":
    main()
