"""What the archives' datasets hold: sizes, channels, lengths, classes, and where they come from.

Counts are checked after loading, so a truncated or wrong file is an error, never a silently smaller
benchmark. ``source`` says where each entry's numbers come from: ``"files"`` entries were read off the
archive files themselves (the copies the team benchmarks on); ``"literature"`` entries come from the
archive papers (Bagnall et al. 2018 for UEA, Tan et al. 2021 for TSER) for sets not on our machines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Zenodo records of the Monash/UEA/UCR TSER archive (Tan et al. 2021), as listed by aeon.
TSER_ZENODO = {
    "AppliancesEnergy": 3902637,
    "BenzeneConcentration": 3902673,
    "BeijingPM10Quality": 3902667,
    "BeijingPM25Quality": 3902671,
    "LiveFuelMoistureContent": 4632439,
    "IEEEPPG": 3902710,
    "FloodModeling1": 3902694,
    "Covid3Month": 3902690,
}


@dataclass(frozen=True)
class DatasetInfo:
    """One archive dataset.

    Attributes
    ----------
    name : str
    archive : {"UEA", "TSER"}
    task : {"classification", "regression"}
    n_train, n_test : int
    n_channels : int
    length : (int, int)
        Shortest and longest series (equal when all have one length).
    n_classes : int or None
        None for regression.
    missing : bool
        Whether the files contain missing values.
    tables : tuple of str
        The paper's tables it appears in ("1", "2", "4") or ("extra",).
    source : {"files", "literature"}
    url : str or None
        Download address of the archive's zip; None derives it from ``archive``.
    sha256 : str or None
        Checksum of that zip, when known.
    scale_spread : float or None
        log10 of the widest spread of a channel's TRAIN series' scales (``eadct.estimators.scale_spread``, the
        ratio of the 90th to the 10th percentile of their standard deviations), read off the files by
        ``research/benchmarks/scale_spread.py``; None where not measured. What ``wide_scales="auto"`` decides on the
        set,
        without loading it (the tables' keys).
    """

    name: str
    archive: str
    task: str
    n_train: int
    n_test: int
    n_channels: int
    length: tuple[int, int]
    n_classes: int | None = None
    missing: bool = False
    tables: tuple[str, ...] = ("extra",)
    source: str = "literature"
    url: str | None = None
    sha256: str | None = None
    scale_spread: float | None = None
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def equal_length(self) -> bool:
        return self.length[0] == self.length[1]

    def n_samples(self, split: str) -> int:
        return self.n_train if split == "train" else self.n_test


def _uea(name, n_train, n_test, channels, length, classes, tables=("extra",), source="literature", **kw):
    length = (length, length) if isinstance(length, int) else length
    return DatasetInfo(
        name, "UEA", "classification", n_train, n_test, channels, length, classes, tables=tables, source=source, **kw
    )


def _tser(name, n_train, n_test, channels, length, tables=("extra",), source="literature", **kw):
    return DatasetInfo(
        name, "TSER", "regression", n_train, n_test, channels, (length, length), tables=tables, source=source, **kw
    )


_ENTRIES = [
    # The paper's Table 2 (UEA classification); Table 4 ablations on UWaveGestureLibrary, FaceDetection,
    # Handwriting, Heartbeat.
    _uea("EthanolConcentration", 261, 263, 3, 1751, 4, ("2",)),
    _uea("FaceDetection", 5890, 3524, 144, 62, 2, ("2", "4")),
    _uea("Handwriting", 150, 850, 3, 152, 26, ("2", "4"), "files", scale_spread=0.00),
    _uea("Heartbeat", 204, 205, 61, 405, 2, ("2", "4")),
    _uea("JapaneseVowels", 270, 370, 12, (7, 29), 9, ("2",), "files", scale_spread=0.63),
    _uea("PEMS-SF", 267, 173, 963, 144, 7, ("2",)),
    _uea("SelfRegulationSCP1", 268, 293, 6, 896, 2, ("2",)),
    _uea("SelfRegulationSCP2", 200, 180, 7, 1152, 2, ("2",)),
    _uea("SpokenArabicDigits", 6599, 2199, 13, (4, 93), 10, ("2",)),
    _uea("UWaveGestureLibrary", 120, 320, 3, 315, 8, ("2", "4"), "files", scale_spread=0.00),
    _uea("InsectWingbeat", 30000, 20000, 200, (2, 22), 10, ("2",)),
    # The paper's Table 1 (TSER regression); Table 3 ablations on the first four.
    _tser("AppliancesEnergy", 95, 42, 24, 144, ("1", "3")),
    _tser("BenzeneConcentration", 3433, 5445, 8, 240, ("1", "3"), missing=True),
    _tser("BeijingPM10Quality", 12432, 5686, 9, 24, ("1", "3"), missing=True),
    _tser("BeijingPM25Quality", 12432, 5686, 9, 24, ("1", "3"), missing=True),
    _tser("LiveFuelMoistureContent", 3493, 1510, 7, 365, ("1",)),
    _tser("IEEEPPG", 1768, 1328, 5, 1000, ("1",)),
    # Other archive sets on the team's machines (beyond the paper).
    _uea("ArticularyWordRecognition", 275, 300, 9, 144, 25, source="files", scale_spread=0.00),
    _uea("AtrialFibrillation", 15, 15, 2, 640, 3, source="files", scale_spread=0.70),
    _uea("BasicMotions", 40, 40, 6, 100, 4, source="files", scale_spread=1.75),
    _uea("ERing", 30, 270, 4, 65, 6, source="files", scale_spread=0.00),
    _uea("Epilepsy", 137, 138, 3, 206, 4, source="files", scale_spread=0.99),
    _uea("FingerMovements", 316, 100, 28, 50, 2, source="files", scale_spread=0.47),
    _uea("Libras", 180, 180, 2, 45, 15, source="files", scale_spread=1.13),
    _uea("StandWalkJump", 12, 15, 4, 2500, 3, source="files", scale_spread=0.66),
    _tser("FloodModeling1", 471, 202, 1, 266, source="files", scale_spread=0.34),
    _tser("Covid3Month", 140, 61, 1, 84, source="files", scale_spread=2.45),
    _tser("Tecator", 172, 43, 1, 100, source="files", scale_spread=0.19),
    _tser("ChilledWaterPredictor", 321, 138, 4, 168, source="files", scale_spread=0.48),
    _tser("BitcoinSentiment", 232, 100, 2, 24, source="files", scale_spread=0.78),
    _tser("CardanoSentiment", 74, 33, 2, 24, source="files", scale_spread=0.82),
]

REGISTRY: dict[str, DatasetInfo] = {info.name: info for info in _ENTRIES}
PAPER_TABLES = {
    "1": [n for n, i in REGISTRY.items() if "1" in i.tables],
    "2": [n for n, i in REGISTRY.items() if "2" in i.tables],
    "3": [n for n, i in REGISTRY.items() if "3" in i.tables],
    "4": [n for n, i in REGISTRY.items() if "4" in i.tables],
}


def register_dataset(info: DatasetInfo, overwrite: bool = False) -> None:
    """Add a dataset (your own archive, or a test fixture) to the registry."""
    if info.name in REGISTRY and not overwrite:
        raise ValueError(f"{info.name!r} is already registered; pass overwrite=True to replace it")
    REGISTRY[info.name] = info


def get_info(name: str) -> DatasetInfo | None:
    """The registry entry of ``name`` (case-insensitive), or None."""
    if name in REGISTRY:
        return REGISTRY[name]
    lowered = {k.lower(): v for k, v in REGISTRY.items()}
    return lowered.get(name.lower())
