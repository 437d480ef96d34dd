"""What the framework adapters (``cce.jax``, ``cce.torch``) share: the ``cce.allreduce`` options
they pass on, the check of option names, and importing the framework at a tested version."""
import importlib
import warnings

from ._errors import CceError

#: ``cce.allreduce`` options the adapters pass on.
OPTIONS = ("algo", "accum", "rounding", "seed", "arch", "compress", "ranks_per_node", "check", "nodes", "intra", "inter")

# Frameworks whose untested version was warned about (once per process, not per call).
_WARNED = set()


def check_names(opts, adapter):
    """Raises CceError for an option that is not in OPTIONS (values are cce.allreduce's to check)."""
    bad = sorted(set(opts) - set(OPTIONS))
    if bad:
        raise CceError(f"cce.{adapter}: unknown option {bad[0]!r}; expected one of {', '.join(OPTIONS)}")


def require(name, supported, extra):
    """The framework module ``name``. Missing: a CceError naming the package extra that installs
    it. A version outside ``supported`` (version prefixes): a warning, the first time only."""
    try:
        module = importlib.import_module(name)
    except ImportError:
        raise CceError(f"cce.{extra} needs {name}: pip install 'cce-trainium[{extra}]'") from None
    if not module.__version__.startswith(supported) and name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"cce.{extra} is tested with {name} {', '.join(supported)}; this is {name} {module.__version__}",
                      stacklevel=3)
    return module
