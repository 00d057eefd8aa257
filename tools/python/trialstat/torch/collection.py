# SPDX-License-Identifier: Apache-2.0
"""Collections of the capture hook: named groups of tensors with their own save and reduction
configs, as smdebug 1.0.34's PyTorch ``Collection`` / ``CollectionManager`` (spec/HOOK_API.md §3;
collections file FORMAT.md §8)."""
import re

from ..exceptions import SMDebugError, SMDebugTypeError
from ..trial import Collection as AnalysisCollection
from .reduction_config import ReductionConfig
from .save_config import SaveConfig

__all__ = ["Collection", "CollectionKeys", "CollectionManager", "DEFAULT_PYTORCH_COLLECTIONS",
           "SCALAR_COLLECTIONS", "NON_HISTOGRAM_COLLECTIONS", "NON_REDUCTION_COLLECTIONS"]


class CollectionKeys:
    """smdebug's collection names (``smdebug.core.collection.CollectionKeys``)."""
    DEFAULT = "default"
    ALL = "all"
    WEIGHTS = "weights"
    BIASES = "biases"
    GRADIENTS = "gradients"
    LOSSES = "losses"
    METRICS = "metrics"
    SM_METRICS = "sm_metrics"
    OPTIMIZER_VARIABLES = "optimizer_variables"
    TENSORFLOW_SUMMARIES = "tensorflow_summaries"
    FEATURE_IMPORTANCE = "feature_importance"
    AVERAGE_SHAP = "average_shap"


# Scalar-like collections: raw tensors only, no histograms (HOOK_API §3.1).
SCALAR_COLLECTIONS = {CollectionKeys.LOSSES, CollectionKeys.METRICS, CollectionKeys.FEATURE_IMPORTANCE,
                      CollectionKeys.AVERAGE_SHAP, CollectionKeys.SM_METRICS}
NON_REDUCTION_COLLECTIONS = SCALAR_COLLECTIONS | {CollectionKeys.TENSORFLOW_SUMMARIES}
NON_HISTOGRAM_COLLECTIONS = NON_REDUCTION_COLLECTIONS
# Never due in EVAL or PREDICT mode (HOOK_API §4.3).
TRAIN_ONLY_COLLECTIONS = {CollectionKeys.GRADIENTS, CollectionKeys.OPTIMIZER_VARIABLES}

# The PyTorch hook's built-in collections and their regexes, in smdebug's creation order.
DEFAULT_PYTORCH_COLLECTIONS = {
    CollectionKeys.ALL: [],
    CollectionKeys.DEFAULT: [],
    CollectionKeys.WEIGHTS: ["^(?!gradient).*weight"],
    CollectionKeys.BIASES: ["^(?!gradient).*bias"],
    CollectionKeys.GRADIENTS: ["^gradient"],
    CollectionKeys.LOSSES: ["[Ll]oss_(?!input).*output"],
}


class Collection(AnalysisCollection):
    """A named group of tensors (the analysis side's ``trialstat.Collection`` with the hook's
    typed configs). Membership: a name is in the collection when it is in ``tensor_names`` or one
    of ``include_regex`` matches it anywhere (Python ``re.search``).

    name: str; include_regex: list of str; tensor_names: set of str (a list is converted);
    reduction_config: ReductionConfig or None (None: the hook's); save_config: SaveConfig, a dict
    {mode: SaveConfigMode} (modes left out take the hook's) or None (the hook's);
    save_histogram: bool (TensorBoard histograms, when the hook exports TensorBoard).
    """

    def __init__(self, name, include_regex=None, tensor_names=None, reduction_config=None,
                 save_config=None, save_histogram=True):
        super().__init__(name, include_regex, tensor_names, reduction_config, save_config, save_histogram)
        self._modules = {}
        self._compiled = []

    @property
    def reduction_config(self):
        return self._reduction_config

    @reduction_config.setter
    def reduction_config(self, config):
        if config is not None and not isinstance(config, ReductionConfig):
            raise SMDebugTypeError(f"reduction_config={config} must be of type ReductionConfig")
        self._reduction_config = config

    @property
    def save_config(self):
        return self._save_config

    @save_config.setter
    def save_config(self, config):
        if isinstance(config, dict):
            config = SaveConfig(mode_save_configs=config)
        if config is not None and not isinstance(config, SaveConfig):
            raise SMDebugTypeError(
                f"save_config={config} must be of type SaveConfig or type Dict[ModeKeys, SaveConfigMode]")
        self._save_config = config

    @property
    def save_raw_tensor(self):
        return self._reduction_config is None or self._reduction_config.save_raw_tensor

    @property
    def save_shape(self):
        return self._reduction_config is not None and self._reduction_config.save_shape

    @property
    def reductions(self):
        return self._reduction_config.to_json_dict()["reductions"] if self._reduction_config else ""

    def add_module_tensors(self, module, inputs=False, outputs=True):
        """Save the inputs and/or outputs of a registered submodule in this collection (its
        dotted path becomes a regex ``<path>_input_`` / ``<path>_output_`` at the first step)."""
        self._modules[module] = (inputs, outputs)

    @property
    def modules(self):
        return self._modules

    def matches(self, name):
        """Whether ``name`` is a member (explicit name or ``re.search`` of a regex)."""
        if name in self._tensor_names:
            return True
        if len(self._compiled) != len(self.include_regex):
            self._compiled = [re.compile(r) for r in self.include_regex]
        return any(rx.search(name) for rx in self._compiled)

    def to_json_dict(self):
        """The collections file's entry (FORMAT §8); ``tensor_names`` sorted."""
        return {"name": self.name, "include_regex": self.include_regex,
                "tensor_names": sorted(self.tensor_names),
                "reduction_config": self.reduction_config.to_json_dict() if self.reduction_config else None,
                "save_config": self.save_config.to_json_dict() if self.save_config else None,
                "save_histogram": self.save_histogram}

    def __eq__(self, other):
        if not isinstance(other, Collection):
            return NotImplemented
        return self is other or self.to_json_dict() == other.to_json_dict()

    __hash__ = AnalysisCollection.__hash__

    def __repr__(self):
        return f"<class Collection: name={self.name}>"


class CollectionManager:
    """The hook's collections by name, created with the PyTorch built-ins (HOOK_API §3.1)."""

    def __init__(self, create_default=True):
        self.collections = {}
        if create_default:
            for name, regexes in DEFAULT_PYTORCH_COLLECTIONS.items():
                self.collections[name] = Collection(name, include_regex=list(regexes))

    def get(self, name, create=True):
        """The collection ``name``; created when missing (else SMDebugError)."""
        if name not in self.collections:
            if not create:
                raise SMDebugError(f"Collection {name} has not been created")
            self.collections[name] = Collection(name)
        return self.collections[name]

    def add(self, collection):
        """Add (or replace by name) a Collection, or create one from a name."""
        if isinstance(collection, str):
            self.get(collection)
        elif isinstance(collection, Collection):
            self.collections[collection.name] = collection
        else:
            raise SMDebugTypeError(
                f"collection must be an instance of Collection class. value of type "
                f"{collection.__class__} is not supported")

    def get_collections(self):
        return self.collections
