# The nightly builder: toolkit, host compiler and Python pinned, so a cache
# key computed in it means the same thing on every builder.
#   docker build -f ci/builder.Dockerfile -t archbuild-builder:cuda13.0 .
FROM nvidia/cuda:13.0.2-devel-ubuntu24.04

ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends \
      g++-13 cmake ninja-build git ccache python3 python3-venv python3-pip python3-dev \
      libgit2-dev libspdlog-dev libtomlplusplus-dev libboost-filesystem-dev libboost-dev \
      libcli11-dev nlohmann-json3-dev libzip-dev libzstd-dev liblz4-dev libssl-dev libgtest-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
ENV CC=gcc-13 CXX=g++-13 CUDAHOSTCXX=g++-13

# The build interpreter: setuptools, ninja and torch's build requirements.
RUN python3 -m venv /opt/py && /opt/py/bin/pip install --no-cache-dir \
      "setuptools<82" wheel ninja numpy pyyaml typing-extensions sympy networkx jinja2 fsspec filelock packaging
ENV ARCHBUILD_PYTHON=/opt/py/bin/python ARCHBUILD_COMPILER_LAUNCHER=ccache

COPY . /src/archbuild
RUN cmake -S /src/archbuild -B /src/archbuild/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DARCHBUILD_BUILD_TESTS=OFF \
    && cmake --build /src/archbuild/build \
    && install -m 755 /src/archbuild/build/src/archbuild /usr/local/bin/archbuild
ENV ARCHBUILD_DATA_DIR=/src/archbuild
