"""Builds the native part of the Python module (mcubes._mcubes) with the project's CMake, for
`pip install --no-build-isolation .` (pyproject.toml). The version is include/mcubes/config.hpp's.
The CUDA backend (GPU callables: PyTorch, CuPy) is built whenever nvcc is found (CMake's
MCUBES_ENABLE_CUDA=AUTO): for the visible GPU's architecture, or without a visible GPU for the
architectures of MCUBES_CUDA_ARCHITECTURES (default CMakeLists.txt's portable list);
MCUBES_ENABLE_CUDA=OFF (the only way to leave it out where nvcc exists) never, ON requires it.
Environment: MCUBES_ENABLE_CUDA, MCUBES_CUDA_ARCHITECTURES, MCUBES_CMAKE_ARGS (extra arguments of
the CMake configuration, space-separated), MCUBES_CMAKE_BUILD_DIR (package the module of that
configured CMake build, MCUBES_BUILD_PYTHON=ON, instead of configuring one: CI's wheel,
scripts/check-wheel.sh). `pip install -v` shows the compiler's progress."""

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


def gpu_visible():
    """Whether a GPU is visible, as scripts/quickstart.sh asks: /dev/nvidia0, or nvidia-smi -L lists one."""
    if os.path.exists("/dev/nvidia0"):
        return True
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return any(line.startswith("GPU ") for line in out.splitlines())


def cuda_setting():
    """MCUBES_ENABLE_CUDA when set (ON, OFF or AUTO), else AUTO: the CUDA backend whenever nvcc is found
    (for the visible GPU, or the portable architectures where none is visible; gpu_visible() only names
    the case in the message)."""
    given = os.environ.get("MCUBES_ENABLE_CUDA", "").strip().upper()
    if given:
        if given not in ("ON", "OFF", "AUTO"):
            raise SystemExit(f"setup.py: MCUBES_ENABLE_CUDA must be ON, OFF or AUTO, got {given!r}")
        return given
    return "AUTO"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        prebuilt = os.environ.get("MCUBES_CMAKE_BUILD_DIR", "").strip()
        if prebuilt:  # a configured CMake build with MCUBES_BUILD_PYTHON=ON (CI's wheel: scripts/check-wheel.sh)
            build = os.path.abspath(prebuilt)
            print(f"setup.py: the native module of the CMake build {build}", file=sys.stderr, flush=True)
            subprocess.check_call(["cmake", "--build", build, "--target", "mcubes_python", "-j", str(os.cpu_count() or 1)])
            self._install(ext, build)
            return
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        cuda = cuda_setting()
        configure = ["cmake", "-S", HERE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DMCUBES_BUILD_PYTHON=ON",
                     "-DMCUBES_BUILD_TESTS=OFF", "-DMCUBES_BUILD_CLI=OFF", "-DMCUBES_BUILD_BENCH=OFF",
                     "-DMCUBES_BUILD_EXAMPLES=OFF", f"-DMCUBES_ENABLE_CUDA={cuda}",
                     f"-DPython3_EXECUTABLE={sys.executable}"]
        if os.environ.get("MCUBES_CUDA_ARCHITECTURES"):
            configure.append(f"-DMCUBES_CUDA_ARCHITECTURES={os.environ['MCUBES_CUDA_ARCHITECTURES']}")
        configure += os.environ.get("MCUBES_CMAKE_ARGS", "").split()
        where = "" if cuda == "OFF" else (" (the visible GPU's architecture)" if gpu_visible() else
                                          " (no GPU visible: the portable architectures, a longer compile)")
        print(f"setup.py: building the native module with CMake (CUDA backend: {cuda}, built when nvcc is found"
              f"{where}; MCUBES_ENABLE_CUDA=OFF leaves it out); pip install -v shows the progress",
              file=sys.stderr, flush=True)
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build, "--target", "mcubes_python", "-j", str(os.cpu_count() or 1)])
        self._install(ext, build)

    def _install(self, ext, build):
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
