"""Builds the native part of the Python module (mcubes._mcubes) with the project's CMake, for
`pip install --no-build-isolation .` (pyproject.toml). The version is include/mcubes/config.hpp's.
Environment: MCUBES_CMAKE_ARGS, extra arguments of the CMake configuration (space-separated)."""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(HERE, "include", "mcubes", "config.hpp")) as f:
        return re.search(r'#define MCUBES_VERSION_STRING "([0-9.]+)"', f.read()).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        configure = ["cmake", "-S", HERE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DMCUBES_BUILD_PYTHON=ON",
                     "-DMCUBES_BUILD_TESTS=OFF", "-DMCUBES_BUILD_CLI=OFF", "-DMCUBES_BUILD_BENCH=OFF",
                     "-DMCUBES_BUILD_EXAMPLES=OFF", "-DMCUBES_ENABLE_CUDA=OFF",
                     f"-DPython3_EXECUTABLE={sys.executable}"] + os.environ.get("MCUBES_CMAKE_ARGS", "").split()
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build, "--target", "mcubes_python", "-j", str(os.cpu_count() or 1)])
        built = os.path.join(build, "python", "mcubes", os.path.basename(self.get_ext_filename(ext.name)))
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)
        # the headers, for expression strings compiled at run time (mcubes._include_dir)
        shutil.copytree(os.path.join(HERE, "include", "mcubes"), os.path.join(os.path.dirname(dest), "include", "mcubes"),
                        dirs_exist_ok=True)


# setuptools' build folder: build-pip/ (ignored by git; build/ is the command's CMake build)
setup(version=version(), ext_modules=[CMakeExtension("mcubes._mcubes")], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": "build-pip"}})
