# SPDX-License-Identifier: Apache-2.0
"""What a collection stores instead of (or besides) the raw tensor: ``ReductionConfig``, as
smdebug 1.0.34's (spec/HOOK_API.md §4.4; JSON form FORMAT.md §8)."""
from ..exceptions import SMDebugValueError

__all__ = ["ReductionConfig", "ALLOWED_REDUCTIONS", "ALLOWED_NORMS"]

ALLOWED_REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum", "prod"]
ALLOWED_NORMS = ["l1", "l2"]


class ReductionConfig:
    """Reductions computed in the training job and saved as
    ``smdebug/reductions/[abs_]<op>/<tensor>`` records (0-d, the tensor's dtype; FORMAT §7).

    reductions / abs_reductions: names from ``ALLOWED_REDUCTIONS`` (abs_: of ``|x|``);
    norms / abs_norms: ``"l1"``, ``"l2"``; save_raw_tensor, save_shape: bool. Note the class
    default ``save_raw_tensor=False`` differs from the hook's default config (raw tensors).
    Raises SMDebugValueError for an unknown name or a non-bool flag.
    """

    def __init__(self, reductions=None, abs_reductions=None, norms=None, abs_norms=None,
                 save_raw_tensor=False, save_shape=False):
        self.reductions = reductions if reductions is not None else []
        self.abs_reductions = abs_reductions if abs_reductions is not None else []
        self.norms = norms if norms is not None else []
        self.abs_norms = abs_norms if abs_norms is not None else []
        self.save_raw_tensor = save_raw_tensor
        self.save_shape = save_shape
        for field, allowed in (("reductions", ALLOWED_REDUCTIONS), ("abs_reductions", ALLOWED_REDUCTIONS),
                               ("norms", ALLOWED_NORMS), ("abs_norms", ALLOWED_NORMS)):
            if any(x not in allowed for x in getattr(self, field)):
                raise SMDebugValueError(f"{field} can only be one of " + ",".join(allowed))
        for flag in ("save_raw_tensor", "save_shape"):
            if not isinstance(getattr(self, flag), bool):
                raise SMDebugValueError(f"{flag}={getattr(self, flag)} must be a boolean")

    def operations(self):
        """The (op, abs) pairs in smdebug's write order: reductions, norms, abs_reductions,
        abs_norms (HOOK_API §4.6 step 2)."""
        return ([(r, False) for r in self.reductions + self.norms]
                + [(r, True) for r in self.abs_reductions + self.abs_norms])

    @classmethod
    def from_dict(cls, params):
        """From the flattened form ``{"reductions": "min,abs_l2_norm", "save_raw_tensor": b,
        "save_shape": b}`` (JSON hook config and collections file); None gives None."""
        if params is None:
            return None
        if not isinstance(params, dict):
            raise SMDebugValueError(f"params={params} must be dict")
        reductions, norms, abs_reductions, abs_norms = [], [], [], []
        for red in (x.strip() for x in params.get("reductions", "").split(",")):
            if not red:
                continue
            if red.startswith("abs_"):
                (abs_norms if red.endswith("_norm") else abs_reductions).append(red.split("_")[1])
            else:
                (norms if red.endswith("_norm") else reductions).append(
                    red.split("_")[0] if red.endswith("_norm") else red)
        return cls(reductions, abs_reductions, norms, abs_norms,
                   save_raw_tensor=params.get("save_raw_tensor", False),
                   save_shape=params.get("save_shape", False))

    def to_json_dict(self):
        """``{"save_raw_tensor", "reductions" (comma string), "save_shape"}`` (FORMAT §8)."""
        names = (list(self.reductions) + [f"{n}_norm" for n in self.norms]
                 + [f"abs_{r}" for r in self.abs_reductions] + [f"abs_{n}_norm" for n in self.abs_norms])
        return {"save_raw_tensor": self.save_raw_tensor, "reductions": ",".join(names),
                "save_shape": self.save_shape}

    def __eq__(self, other):
        if not isinstance(other, ReductionConfig):
            return NotImplemented
        return (self.reductions, self.abs_reductions, self.norms, self.abs_norms, self.save_raw_tensor,
                self.save_shape) == (other.reductions, other.abs_reductions, other.norms, other.abs_norms,
                                     other.save_raw_tensor, other.save_shape)

    def __repr__(self):
        return (f"<class ReductionConfig: reductions={self.reductions}, abs_reductions={self.abs_reductions}, "
                f"norms={self.norms}, abs_norms={self.abs_norms}>, save_shape={self.save_shape}, "
                f"save_raw_tensor={self.save_raw_tensor}")
