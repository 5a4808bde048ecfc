"""Screen candidate defaults on the TRAIN splits only: which settings should ``EADCTClassifier()`` and
``EADCTRegressor()`` ship with?

For every dataset only the TRAIN file is read. It is split once per seed into an inner training part and an
inner hold-out (stratified for classification, ``--holdout`` of the series); every candidate is fitted on the
inner training part and scored on the hold-out (accuracy or RMSE), with its fit time. The TEST file is never
opened, so the defaults chosen from this table are chosen on TRAIN only; the accuracy benchmark
(``eadct-tables run accuracy``) then measures them on TEST.

Candidates are named sets of estimator parameters on top of a fixed reference of the estimators' defaults
(``CANDIDATES``, ``resolve``: a name means the same fit after a default changes). Every
finished (candidate, dataset, seed) is appended to ``--out`` (JSON lines) at once, so a killed screen rerun
with the same command goes on where it stopped. The table printed: per dataset the hold-out score of each
candidate, then per candidate the mean score and mean rank over the classification sets, the mean rank and
the mean RMSE relative to the first candidate over the regression sets, and the median fit time.

Classifier rows also record the hold-out log-loss (``holdout_log_loss``, a second reading). Each comparison over the
(set, seed) pairs comes with the standard error of its mean and a sign-flip permutation p-value (``sign_flip_p``);
``--pairs`` prints each candidate against the baseline pair by pair.

    python benchmarks/screen_defaults.py --candidates base segments --datasets ERing Libras --threads 1
    python benchmarks/screen_defaults.py --report          # the table of what has finished
    python benchmarks/screen_defaults.py --report --baseline NAME --pairs   # and pair by pair against NAME
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from eadct.tables import append_jsonl, read_jsonl

#: Named candidates: estimator parameters on top of a fixed reference, the defaults when the tables' result keys
#: were last reset (``eadct.tables.REFERENCE_DEFAULTS``: batches of 16, 4 segments, a validation split of
#: 0.1, no weight averaging, no ridge refit), not on top of the defaults of the day, so that a name means the same
#: fit whenever it runs (``resolve``). "paper" is the paper's configuration of MODEL_SPEC (the defaults before the
#: screen); the others change one or a few things.
PAPER = dict(pooling="mean", max_epochs=100, pretrain_epochs=50, n_iter_no_change=30, batch_size=32)
#: Shorter training, tokens pooled before attention on long series ("auto"), batches of 16.
SHORT = dict(PAPER, max_epochs=60, pretrain_epochs=20, n_iter_no_change=20, batch_size=16, attention_downsample="auto")
#: No inner validation, constant rate, the mean of the weights of the last 20 fine-tuning epochs kept: the
#: classifier's defaults after the first benchmark rows; then with batches of 8.
SWA20 = dict(SHORT, pooling="segments", average_epochs=20, validation_fraction=0.0)
SWA20_B8 = dict(SWA20, batch_size=8)
#: The classifier's defaults since 8 segments became one.
SWA20_B8_SEG8 = dict(SWA20_B8, n_segments=8)
#: The classifier's training (SWA20) under the regressor's ridge head: the base of the regressor's averaging rows.
SWA20_RIDGE = dict(SWA20, head_refit="ridge")
CANDIDATES = {
    "paper": PAPER,
    "short": SHORT,
    "short-segments": dict(SHORT, pooling="segments"),
    "short-meanmax": dict(SHORT, pooling="mean-max"),
    "short-segments-heads2": dict(SHORT, pooling="segments", n_heads=2),
    "short-segments-cosine": dict(SHORT, pooling="segments", lr_schedule="cosine", n_iter_no_change=None),
    "short-segments-val25": dict(SHORT, pooling="segments", validation_fraction=0.25),
    "short-segments-ens5": dict(SHORT, pooling="segments", n_estimators=5),
    # no inner validation: every TRAIN series trains, the cosine schedule ends the run, the last epochs kept
    "short-segments-all-cosine": dict(
        SHORT, pooling="segments", lr_schedule="cosine", n_iter_no_change=None, validation_fraction=0.0
    ),  # fmt: skip
    # no inner validation, constant rate, the mean of the weights of the last 20 fine-tuning epochs kept
    "short-segments-all-swa20": SWA20,
    # the classifier's defaults (all-swa20) trained longer: 100 fine-tuning epochs, the last 40 averaged
    "short-segments-all-swa40-e100": dict(SWA20, max_epochs=100, average_epochs=40),
    # the classifier's defaults with the paper's 50 pretraining epochs instead of 20
    "short-segments-all-swa20-pre50": dict(SWA20, pretrain_epochs=50),
    # the classifier's defaults with twice the learning rate (weight averaging favours a high constant rate)
    "short-segments-all-swa20-lr2": dict(SWA20, lr=2e-3),
    # the classifier's defaults with batches of 8 (twice the optimizer steps; the small sets have 2-12 per epoch)
    "short-segments-all-swa20-b8": SWA20_B8,
    # the classifier's defaults since batches of 8 became one, with twice the learning rate
    "short-segments-all-swa20-b8-lr2": dict(SWA20_B8, lr=2e-3),
    # the classifier's defaults without dropout (weight averaging regularises; the small sets underfit?)
    "short-segments-all-swa20-b8-drop0": dict(SWA20_B8, dropout=0.0),
    # the classifier's defaults with 8 segments instead of 4 (a finer temporal layout in the head's input)
    "short-segments-all-swa20-b8-seg8": SWA20_B8_SEG8,
    # the classifier's defaults with magnitude augmentation of the fine-tuning batches (scaling and jitter)
    "short-segments-all-swa20-b8-seg8-aug10": dict(SWA20_B8_SEG8, augmentation=0.1),
    "short-segments-all-swa20-b8-seg8-aug20": dict(SWA20_B8_SEG8, augmentation=0.2),
    # the classifier's defaults with the BatchNorm statistics of the averaged weights measured again (SWA's pass)
    "short-segments-all-swa20-b8-seg8-bn": dict(SWA20_B8_SEG8, average_batch_norm="recompute"),
    # the classifier's defaults with twice the dropout (dropout 0 lost the screen: does more regularise better?)
    "short-segments-all-swa20-b8-seg8-drop2": dict(SWA20_B8_SEG8, dropout=0.2),
    # the classifier's defaults with half the width in attention (p = 0.5: 4 query/key dimensions per head, not 2)
    "short-segments-all-swa20-b8-seg8-p50": dict(SWA20_B8_SEG8, attention_ratio=0.5),
    # the classifier's defaults with convolution kernels of 7 instead of 3 (the branch sees about 3x the steps)
    "short-segments-all-swa20-b8-seg8-k7": dict(SWA20_B8_SEG8, conv_kernel_size=7),
    # the classifier's defaults with decoupled weight decay 0.1 (AdamW-style, both stages): a regulariser that
    # dropout 0 / 0.2 and augmentation did not provide
    "short-segments-all-swa20-b8-seg8-wd": dict(
        SWA20_B8_SEG8, optimizer_kwargs=dict(betas=(0.9, 0.99), weight_decay=0.1, decoupled_weight_decay=True)
    ),
    # the classifier's defaults with label smoothing 0.1 in the fine-tuning loss (new option)
    "short-segments-all-swa20-b8-seg8-ls10": dict(SWA20_B8_SEG8, label_smoothing=0.1),
    # the classifier's defaults with window slicing: each training series a random 90% window of itself,
    # stretched back (time augmentation; magnitude augmentation lost its screen)
    "short-segments-all-swa20-b8-seg8-ws10": dict(SWA20_B8_SEG8, window_slicing=0.1),
    # the classifier's defaults with 16 segments instead of 8 (4 -> 8 was the last change that passed)
    "short-segments-all-swa20-b8-seg16": dict(SWA20_B8_SEG8, n_segments=16),
    # the classifier's defaults with mixup (new option; Zhang et al. 2018) at Beta(0.2, 0.2), the ImageNet
    # setting (most batches nearly unmixed), and at Beta(1, 1), the CIFAR setting (uniform mixing weight)
    "short-segments-all-swa20-b8-seg8-mix02": dict(SWA20_B8_SEG8, mixup=0.2),
    "short-segments-all-swa20-b8-seg8-mix10": dict(SWA20_B8_SEG8, mixup=1.0),
    # the classifier's defaults in batches of 4 (16 -> 8 was a step that passed: twice the optimizer steps per
    # epoch, each noisier), at the same learning rate and at half of it (the same ratio of rate to batch size)
    "short-segments-all-swa20-b4-seg8": dict(SWA20_B8_SEG8, batch_size=4),
    "short-segments-all-swa20-b4-seg8-lr05": dict(SWA20_B8_SEG8, batch_size=4, lr=5e-4),
    # the classifier's defaults with 40 pretraining epochs instead of 20 (50 was a near-pass before batches of 8
    # and 8 segments: +0.006, 3 / 4 / 3; no pretraining loses on today's defaults)
    "short-segments-all-swa20-b8-seg8-pre40": dict(SWA20_B8_SEG8, pretrain_epochs=40),
    # the classifier's defaults with a third block (6 layers, receptive field of the convolutions 25 -> 57
    # steps, about 1.4x the time), with heads of width 4 instead of 2 (about 0.75x), and with both (about 1x)
    "short-segments-all-swa20-b8-seg8-blocks3": dict(SWA20_B8_SEG8, n_blocks=3),
    "short-segments-all-swa20-b8-seg8-heads4": dict(SWA20_B8_SEG8, n_heads=4),
    "short-segments-all-swa20-b8-seg8-blocks3-heads4": dict(SWA20_B8_SEG8, n_blocks=3, n_heads=4),
    # the classifier's defaults with attention over at most 160 tokens instead of 128 ("attention_tokens", the
    # cap of attention_downsample="auto"; a screen-only key until it became an estimator parameter): of the screen's
    # sets UWaveGestureLibrary pools pairs of steps instead of triples, Handwriting no longer pools
    "short-segments-all-swa20-b8-seg8-tok160": dict(SWA20_B8_SEG8, attention_tokens=160),
    # the classifier's defaults with each channel's first differences beside its values in the input stem
    # (input_differences, new option: the local slope, which MiniRocket's kernels read and the stem does not)
    "short-segments-all-swa20-b8-seg8-diff": dict(SWA20_B8_SEG8, input_differences=True),
    # the classifier's defaults without masked-value pretraining (does it help at all today?), and with a harder
    # pretraining task: twice the masked share, or masked runs twice as long (mean 6 steps instead of 3)
    "short-segments-all-swa20-b8-seg8-pre0": dict(SWA20_B8_SEG8, pretrain_epochs=0),
    "short-segments-all-swa20-b8-seg8-mask30": dict(SWA20_B8_SEG8, mask_ratio=0.3),
    "short-segments-all-swa20-b8-seg8-mlen6": dict(SWA20_B8_SEG8, mask_length=6.0),
    # the classifier's defaults averaging the last 30 of the 60 fine-tuning epochs instead of the last 20
    "short-segments-all-swa30-b8-seg8": dict(SWA20_B8_SEG8, average_epochs=30),
    # the classifier's defaults with more of the evolving attention: a 5 x 5 map convolution (the paper's 1, 3 or 5),
    # or beta = 0.5 (more weight on the convolved maps); and twice the width (d_model 128: 4 query/key dimensions
    # per head, about twice the time)
    "short-segments-all-swa20-b8-seg8-ak5": dict(SWA20_B8_SEG8, attention_kernel_size=5),
    "short-segments-all-swa20-b8-seg8-beta5": dict(SWA20_B8_SEG8, beta=0.5),
    "short-segments-all-swa20-b8-seg8-d128": dict(SWA20_B8_SEG8, d_model=128),
    # regression: decoupled weight decay 0.1 on the regressor's defaults (a regulariser for the noisy sets)
    "short-segments-wd": dict(
        SHORT,
        pooling="segments",
        optimizer_kwargs=dict(betas=(0.9, 0.99), weight_decay=0.1, decoupled_weight_decay=True),
    ),
    # regression: the classifier's last two changes, one at a time on the regressor's defaults
    "short-segments-seg8": dict(SHORT, pooling="segments", n_segments=8),
    "short-segments-b8": dict(SHORT, pooling="segments", batch_size=8),
    # regression: no dropout (the regressor underfits Tecator: TRAIN RMSE 3.7 with dropout 0.1)
    "short-segments-drop0": dict(SHORT, pooling="segments", dropout=0.0),
    # regression: the magnitude augmentation on the regressor's defaults
    "short-segments-aug10": dict(SHORT, pooling="segments", augmentation=0.1),
    # regression only: the Huber loss on robustly scaled targets (median, IQR), best epoch on the same loss
    "short-segments-huber": dict(SHORT, pooling="segments", loss="huber"),
    # regression only: the linear head fitted again by ridge regression, strength chosen by leave-one-out on TRAIN
    "short-segments-ridge": dict(SHORT, pooling="segments", head_refit="ridge"),
    # regression: 8 segments under the ridge head (a wider representation for the leave-one-out ridge)
    "short-segments-ridge-seg8": dict(SHORT, pooling="segments", head_refit="ridge", n_segments=8),
    # regression: a quarter of TRAIN for the epoch choice under the ridge head (which then reads all of TRAIN)
    "short-segments-ridge-val25": dict(SHORT, pooling="segments", head_refit="ridge", validation_fraction=0.25),
    # regression: the ridge head also reads the input's means over 32 parts of each channel (head_input_parts)
    "short-segments-ridge-input32": dict(SHORT, pooling="segments", head_refit="ridge", head_input_parts=32),
    # regression: the classifier's training (every TRAIN series trains, the mean of the last 20 epochs' weights)
    # under the ridge head, which then reads the averaged encoder's representation
    "short-segments-ridge-swa20": SWA20_RIDGE,
    # the same in 40 fine-tuning epochs (averaging the last 20): the 60 took FloodModeling1 past 5 minutes
    "short-segments-ridge-swa20-e40": dict(SWA20_RIDGE, max_epochs=40),
    # or in 60 epochs of batches of 32 (half the optimizer steps of 16, so less time per epoch)
    "short-segments-ridge-swa20-b32": dict(SWA20_RIDGE, batch_size=32),
    # or with 5 pretraining epochs, or none (a pretraining epoch costs what a fine-tuning epoch costs)
    "short-segments-ridge-swa20-pre5": dict(SWA20_RIDGE, pretrain_epochs=5),
    "short-segments-ridge-swa20-pre0": dict(SWA20_RIDGE, pretrain_epochs=0),
    # or without dropout (a quarter to a third of a CPU epoch)
    "short-segments-ridge-swa20-drop0": dict(SWA20_RIDGE, dropout=0.0),
    # or with attention over at most 64 tokens ("auto"'s rule with another cap; the conv branch keeps every step)
    "short-segments-ridge-swa20-tok64": dict(SWA20_RIDGE, attention_tokens=64),
    # the regressor's defaults with an exponential moving average of the weights (0.9 per epoch) that the
    # validation split's early stop reads and keeps: weight averaging without running every epoch
    "short-segments-ridge-ema90": dict(SHORT, pooling="segments", head_refit="ridge", average_decay=0.9),
    # the regressor's defaults at twice and at half the learning rate (never screened for the regressor)
    "short-segments-ridge-lr2": dict(SHORT, pooling="segments", head_refit="ridge", lr=2e-3),
    "short-segments-ridge-lr05": dict(SHORT, pooling="segments", head_refit="ridge", lr=5e-4),
    # regression: the regressor's defaults with first differences in the input stem (Tecator's spectra: the
    # derivative is the chemometrics habit)
    "short-segments-ridge-diff": dict(SHORT, pooling="segments", head_refit="ridge", input_differences=True),
    # regression: the paper's patience of 30 epochs instead of 20 (the regressor's best epochs come early; does a
    # later one exist?), and the classifier's batches of 8 under the ridge head (screened only before it)
    "short-segments-ridge-pat30": dict(SHORT, pooling="segments", head_refit="ridge", n_iter_no_change=30),
    "short-segments-ridge-b8": dict(SHORT, pooling="segments", head_refit="ridge", batch_size=8),
    # regression: first differences in the input on top of the regressor's defaults since weight averaging
    # within 1,200 steps (whose screen rows are short-segments-ridge-swa20's: the cap binds on no screen split)
    "short-segments-ridge-swa20-diff": dict(SWA20_RIDGE, input_differences=True),
    # regression: mixup at Beta(0.2, 0.2) on top of the regressor's defaults (the series and the targets mixed
    # alike: exact where the target is linear in the series, as fat content in absorbance spectra)
    "short-segments-ridge-swa20-mix02": dict(SWA20_RIDGE, mixup=0.2),
    # regression: dropout 0.2 on top of the regressor's defaults (without the early stop every fit trains all its
    # epochs; dropout 0 lost against these rows, 1.158x and 3 / 9: is more of it better?)
    "short-segments-ridge-swa20-drop2": dict(SWA20_RIDGE, dropout=0.2),
    # regression: the regressor's defaults without the ridge refit of the head (the head as fine-tuned and
    # averaged; the refit was chosen on the early-stopped base, never screened again on the averaged one)
    "short-segments-ridge-swa20-norefit": dict(SWA20_RIDGE, head_refit=None),
    # the global max of each feature beside the mean and the part means (pooling="segments-max", new): the
    # peak of a feature wherever it falls, which part means blur and MiniRocket's max-like pooling reads;
    # on the classifier's and on the regressor's defaults
    "short-segments-all-swa20-b8-seg8-smax": dict(SWA20_B8_SEG8, pooling="segments-max"),
    "short-segments-ridge-swa20-smax": dict(SWA20_RIDGE, pooling="segments-max"),
    # the classifier's defaults in batches of 16 (before batches of 8, but with 8 segments): fitted as
    # "short-segments-all-swa20" on seeds 2 and 3 while candidates still sat on the defaults of the day
    "short-segments-all-swa20-seg8": dict(SWA20, n_segments=8),
    # the classifier's defaults fine-tuned for 80 epochs instead of 60 (the last 20 still averaged): a third more
    # optimizer steps, the one lever that replicated on fresh splits being batches of 8 (twice the steps)
    "short-segments-all-swa20-b8-seg8-e80": dict(SWA20_B8_SEG8, max_epochs=80),
    # regression: batches of 8 on top of the regressor's defaults, with their step cap (which now binds on the
    # larger splits: twice the steps per epoch); the classifier's batches of 8 replicated on fresh splits
    "short-segments-ridge-swa20-b8": dict(SWA20_RIDGE, batch_size=8, max_steps=1200),
    # a larger convolution share (p = 0.125 instead of 0.25: 56 of the 64 features in the dilated convolutions), in
    # 4 heads so that each keeps the defaults' query/key width of 2; on the classifier's and the regressor's defaults
    "short-segments-all-swa20-b8-seg8-p125": dict(SWA20_B8_SEG8, attention_ratio=0.125, n_heads=4),
    "short-segments-ridge-swa20-p125": dict(SWA20_RIDGE, attention_ratio=0.125, n_heads=4),
    # regression: the regressor's defaults with each prediction clipped to the fitted part's target range
    # (clip_predictions, new): on the noisy sets the ridge head predicts with nearly the targets' spread
    "short-segments-ridge-swa20-clip": dict(SWA20_RIDGE, clip_predictions=True),
    # the classifier's defaults with LayerNorm instead of BatchNorm (norm="layer", never screened): no statistics
    # over batches of 8 series, so no difference between training and prediction and none for the averaging to blur
    "short-segments-all-swa20-b8-seg8-ln": dict(SWA20_B8_SEG8, norm="layer"),
    # the classifier's and the regressor's defaults with each segment slot an attention-weighted mean of its steps
    # (pooling="segments-attention", new value: a learned query per slot, starting as "segments")
    "short-segments-all-swa20-b8-seg8-attn": dict(SWA20_B8_SEG8, pooling="segments-attention"),
    "short-segments-ridge-swa20-attn": dict(SWA20_RIDGE, pooling="segments-attention"),
    # the regressor's defaults with each feature of the representation clipped to its range over TRAIN
    # (clip_representation, new): a series unlike TRAIN's cannot drive the linear head into extrapolating
    "short-segments-ridge-swa20-cliprep": dict(SWA20_RIDGE, clip_representation=True),
    # the signed log of channels with a heavy right tail (docs/accuracy.md, "Candidate: the log of heavy-tailed
    # channels"); it changes nothing on a set where no channel has one
    "short-segments-ridge-swa20-log": dict(SWA20_RIDGE, log_inputs="auto"),
    # the regressor's defaults as an ensemble of five networks from five seeds, each on all of TRAIN (a diagnostic
    # on the small sets, where five fits stay within the time target; docs/accuracy.md)
    "short-segments-ridge-swa20-ens5": dict(SWA20_RIDGE, n_estimators=5),
    # each series standardised by its own mean and spread, which the stem reads as two more constant channels
    # per channel (series_normalization, new; docs/accuracy.md, "Candidate: each series' shape apart from its
    # level")
    "short-segments-ridge-swa20-series": dict(SWA20_RIDGE, series_normalization=True),
    # the regressor's defaults since 2026-11-25: the step cap of 900 (for time). On the screen's splits it binds on
    # FloodModeling1 only (20 batches: 45 epochs instead of 60); every other set's rows are
    # short-segments-ridge-swa20's
    "short-segments-ridge-swa20-cap900": dict(SWA20_RIDGE, max_steps=900),
    # the regressor's defaults since 2026-11-27: the input's treatment chosen on an inner split of the fitted part
    # where the step cap does not bind (docs/accuracy.md, "Decision: input_differences="auto" the regressor's
    # default"); where "auto" keeps the treatment, a row is short-segments-ridge-swa20-cap900's
    "short-segments-ridge-swa20-cap900-auto": dict(SWA20_RIDGE, max_steps=900, input_differences="auto"),
    # the regressor's fit on a set where "auto" takes no differences, with wide_scales' threshold of 10^2 (the
    # classifier's default since 2026-11-27): on the shared TSER sets it acts on Covid3Month alone (docs/accuracy.md,
    # "Candidate: the classifier's threshold of 10^2 for wide_scales in the regressor")
    "short-segments-ridge-swa20-cap900-wide100": dict(SWA20_RIDGE, max_steps=900, wide_scales=100.0),
    "short-segments-all-swa20-b8-seg8-series": dict(SWA20_B8_SEG8, series_normalization=True),
    # the classifier's defaults at half the width (d_model 32 in 4 heads: still 2 query/key dimensions per head), the
    # direction d128 did not take: less capacity for sets of 30-300 series, and fewer multiplications per step
    "short-segments-all-swa20-b8-seg8-d32": dict(SWA20_B8_SEG8, d_model=32, n_heads=4),
    # the classifier's defaults with 16 heads of one query/key dimension: the next step of the trend that 8 heads of
    # 2 beat 4 of 4 and 2 of 8; twice the attention maps for the evolving convolution to mix
    "short-segments-all-swa20-b8-seg8-heads16": dict(SWA20_B8_SEG8, n_heads=16),
    # the classifier's defaults fine-tuned on batches masked as in pretraining (mask_augmentation, new option: 15%
    # of the values zeroed in runs of mean length 3): the gaps the pretraining taught the network to fill
    "short-segments-all-swa20-b8-seg8-mask15": dict(SWA20_B8_SEG8, mask_augmentation=0.15),
    # the same masks in the regressor's fine-tuning, on its defaults (short-segments-ridge-swa20-cap900)
    "short-segments-ridge-swa20-cap900-mask15": dict(SWA20_RIDGE, max_steps=900, mask_augmentation=0.15),
    # the regressor's defaults without the evolving maps (the DC-Transformer: alpha = beta = 0, no map convolution),
    # a lead from the evolving table's TEST rows; failed its screen (docs/accuracy.md, "Candidate: the regressor without
    # the evolving maps")
    "short-segments-ridge-swa20-cap900-dc": dict(SWA20_RIDGE, max_steps=900, architecture="dc-transformer"),
    # the regressor's defaults in a third of the epochs, without and with the input's differences: the short fits
    # that would choose input_differences="auto" (docs/accuracy.md, "Candidate default: the treatment chosen by
    # short fits"; benchmarks/treatment_short_choice.py)
    "short-segments-ridge-swa20-third": dict(SWA20_RIDGE, max_epochs=20, pretrain_epochs=7, average_epochs=7),
    "short-segments-ridge-swa20-third-diff": dict(
        SWA20_RIDGE, max_epochs=20, pretrain_epochs=7, average_epochs=7, input_differences=True
    ),
    # the classifier's defaults with every channel's signed log (log_inputs=True), and with the log and each series'
    # own standardisation: for series whose scales span orders of magnitude (PLAID, which ships with sktime;
    # docs/accuracy.md, "Diagnostic: the defaults on the sets that ship with sktime")
    "short-segments-all-swa20-b8-seg8-log": dict(SWA20_B8_SEG8, log_inputs=True),
    "short-segments-all-swa20-b8-seg8-log-series": dict(SWA20_B8_SEG8, log_inputs=True, series_normalization=True),
    # the classifier's defaults since wide_scales="auto" became one: the log and each series' own standardisation
    # only where a channel's series span more than three orders of magnitude in scale (on PLAID, -log-series's fit)
    "short-segments-all-swa20-b8-seg8-wide": dict(SWA20_B8_SEG8, wide_scales="auto"),
    # today's classifier defaults with a convolutional input stem over 5 or 9 steps (stem_kernel_size, new): each
    # token reads the local shape, where one channel's per-step projection gives it one number (the univariate
    # sets that ship with sktime, docs/accuracy.md, "Diagnostic: the defaults on the sets that ship with sktime")
    "short-segments-all-swa20-b8-seg8-wide-stem5": dict(SWA20_B8_SEG8, wide_scales="auto", stem_kernel_size=5),
    "short-segments-all-swa20-b8-seg8-wide-stem9": dict(SWA20_B8_SEG8, wide_scales="auto", stem_kernel_size=9),
    # today's classifier defaults with the input's first differences: a lead on the univariate sets (docs/accuracy.md,
    # "Lead: the input's first differences in the classifier, on univariate sets"); on PLAID on top of wide_scales
    "short-segments-all-swa20-b8-seg8-wide-diff": dict(SWA20_B8_SEG8, wide_scales="auto", input_differences=True),
    # the classifier's defaults since input_differences="auto" became one: the differences where X has one channel
    # that wide_scales leaves as it is (docs/accuracy.md, "Candidate default: the first differences for one channel")
    "short-segments-all-swa20-b8-seg8-wide-udiff": dict(SWA20_B8_SEG8, wide_scales="auto", input_differences="auto"),
    # today's classifier defaults with the 9-step stem where X has one channel: the stem failed its rule on top of
    # the defaults before the differences; screened again on top of them (docs/accuracy.md, "Candidate: the
    # convolutional stem on top of the differences")
    "short-segments-all-swa20-b8-seg8-wide-udiff-stem": dict(
        SWA20_B8_SEG8, wide_scales="auto", input_differences="auto", stem_kernel_size="auto"
    ),
    # the classifier's defaults since wide_scales' threshold of 10^2 became one (docs/accuracy.md, "Candidate default:
    # a classifier threshold of 10^2 for wide_scales"): -wide-udiff's fit wherever no channel spreads 10^2-10^3; until
    # 2026-11-28, when 40 fine-tuning epochs (-e40, below) became the default
    "short-segments-all-swa20-b8-seg8-wide100-udiff": dict(SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto"),
    # today's classifier defaults with the fixed sine and cosine positions of Vaswani et al. in place of the learned
    # table (positional_encoding, new; docs/accuracy.md, "Candidate: sinusoidal positions in the classifier")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-sin": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", positional_encoding="sinusoidal"
    ),
    # the same with the learned table started as those waves (docs/accuracy.md, same section)
    "short-segments-all-swa20-b8-seg8-wide100-udiff-sinlearned": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", positional_encoding="learned-sinusoidal"
    ),
    # the classifier's defaults with a hidden layer of 128 in the head (the paper's "MLP"; docs/accuracy.md,
    # "Candidate: a hidden layer in the classifier's head")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-hid128": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", head_hidden_size=128
    ),
    # the classifier's defaults with a feed-forward width of 128 instead of 256 (docs/accuracy.md, "Candidate: a
    # narrower feed-forward network in the classifier")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-ff128": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", d_ff=128
    ),
    # the regressor's defaults' fit where "auto" takes the differences (Tecator), and both fits with the stem over 9
    # steps: on the univariate TSER sets (Covid3Month, FloodModeling1, Tecator)
    "short-segments-ridge-swa20-cap900-diff": dict(SWA20_RIDGE, max_steps=900, input_differences=True),
    "short-segments-ridge-swa20-cap900-stem9": dict(SWA20_RIDGE, max_steps=900, stem_kernel_size=9),
    # the regressor's fit where "auto" takes the differences (Tecator) with each series' own standardisation: the
    # derivative and the standard normal variate, chemometrics' usual pair for spectra (docs/accuracy.md,
    # "Candidate: each series' own standardisation beside the differences, in the regressor")
    "short-segments-ridge-swa20-cap900-diff-series": dict(
        SWA20_RIDGE, max_steps=900, input_differences=True, series_normalization=True
    ),
    "short-segments-ridge-swa20-cap900-diff-stem9": dict(
        SWA20_RIDGE, max_steps=900, input_differences=True, stem_kernel_size=9
    ),
    # the classifier's defaults with 40 fine-tuning epochs instead of 60, the last 20 still averaged: a decision for
    # time (docs/accuracy.md, "Candidate default for time: 40 fine-tuning epochs in the classifier")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40
    ),
    # today's classifier defaults (40 epochs) at twice the learning rate: fewer epochs, larger steps, and a wider
    # spread of the weights that the last 20 epochs average (docs/accuracy.md, "Candidate: twice the learning rate
    # at 40 fine-tuning epochs")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-lr2": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, lr=2e-3
    ),
    # today's classifier defaults with the learning rate decaying along a cosine in each stage (the "decay",
    # measured before only against defaults without weight averaging; docs/accuracy.md, "Candidate: a cosine decay
    # of the learning rate under weight averaging")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-cosine": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, lr_schedule="cosine"
    ),
    # today's classifier defaults with the evolving maps weighted as the full profile's search chose on Handwriting,
    # with dropout halved, and (a diagnostic of the screen's log-loss) with batches of 16 again (docs/accuracy.md,
    # "Candidates: the maps' weights and half the dropout, and the screen's log-loss against a known effect")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-a9b1": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, alpha=0.9, beta=0.1
    ),
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-drop05": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, dropout=0.05
    ),
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-b16": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, batch_size=16
    ),
    # today's classifier defaults with each feature's standard deviation over the series beside its means
    # (docs/accuracy.md, "Candidate: statistics pooling")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-std": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, pooling="segments-std"
    ),
    # today's regressor defaults (``...-cap900-auto``) with the same statistics pooling (docs/accuracy.md,
    # "Candidate: statistics pooling", "The regressor")
    "short-segments-ridge-swa20-cap900-auto-std": dict(
        SWA20_RIDGE, max_steps=900, input_differences="auto", pooling="segments-std"
    ),
    # today's defaults with the head's linear layer fitted on the pretrained representation before fine-tuning
    # (LP-FT; docs/accuracy.md, "Candidate: a linear probe before fine-tuning")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-probe": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, head_init="probe"
    ),
    "short-segments-ridge-swa20-cap900-auto-probe": dict(
        SWA20_RIDGE, max_steps=900, input_differences="auto", head_init="probe"
    ),
    # today's classifier defaults with the 9-step convolutional stem on multivariate series too (docs/accuracy.md,
    # "Candidate: the convolutional stem on multivariate series")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-stem9": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, stem_kernel_size=9
    ),
    # today's classifier defaults with every encoder layer's output pooled into the head's input (docs/accuracy.md,
    # "Candidate: every layer's output in the classifier's head")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-layers": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, pool_layers="all"
    ),
    "short-segments-ridge-swa20-cap900-auto-layers": dict(
        SWA20_RIDGE, max_steps=900, input_differences="auto", pool_layers="all"
    ),
    # today's classifier defaults with sharpness-aware minimisation in fine-tuning (docs/accuracy.md, "Candidate:
    # sharpness-aware minimisation in the classifier")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-sam05": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, sam_rho=0.05
    ),
    # today's classifier defaults with stochastic depth (docs/accuracy.md, "Candidate: stochastic depth in the
    # classifier")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-dp10": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, drop_path=0.1
    ),
    # today's classifier defaults with a learned relative-position bias in the attention logits (docs/accuracy.md,
    # "Candidate: a relative-position bias in the classifier's attention")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-relpos": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, relative_positions=True
    ),
    "short-segments-ridge-swa20-cap900-auto-relpos": dict(
        SWA20_RIDGE, max_steps=900, input_differences="auto", relative_positions=True
    ),
    # today's classifier defaults with the dilated convolutions centred on each step instead of causal
    # (docs/accuracy.md, "Candidate: centred dilated convolutions in the classifier")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-centred": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, conv_causal=False
    ),
    # today's classifier defaults with the convolutions' dilation doubling per layer (docs/accuracy.md, "Candidate: the
    # dilation doubling with every layer in the classifier")
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-dil": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, dilation_per_layer=True
    ),
    "short-segments-ridge-swa20-cap900-auto-dil": dict(
        SWA20_RIDGE, max_steps=900, input_differences="auto", dilation_per_layer=True
    ),
    # today's classifier defaults with attention over at most 64 tokens instead of 128 (docs/accuracy.md, "Candidate
    # default: attention over at most 64 tokens in the classifier"): of the screen's sets UWaveGestureLibrary pools
    # 5 steps instead of 3, Handwriting 3 instead of 2, ERing 2 instead of none; Libras and JapaneseVowels unchanged
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-tok64": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, attention_tokens=64
    ),
    # today's classifier defaults with at least 400 fine-tuning steps (docs/accuracy.md, "Candidate default: a floor of
    # 400 fine-tuning steps in the classifier"): of the screen's splits only ERing's change (3 batches: 134 epochs)
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-min400": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, min_steps=400
    ),
    # two networks for the time of one (docs/accuracy.md, "Candidate default: an ensemble of two half fits in the
    # classifier"): each member pretrains 10 epochs and fine-tunes 20, averaging the last 10, on all of TRAIN from its
    # own seed; their class probabilities averaged
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-ens2half": dict(
        SWA20_B8_SEG8,
        wide_scales=100.0,
        input_differences="auto",
        max_epochs=20,
        pretrain_epochs=10,
        average_epochs=10,
        n_estimators=2,
    ),
    # diagnostics of the two halves of ens2half, one network each (docs/accuracy.md, "Candidate default: an ensemble of
    # two half fits in the classifier"): half the pretraining; half the fine-tuning (the last 10 epochs averaged)
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e40-pre10": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=40, pretrain_epochs=10
    ),
    "short-segments-all-swa20-b8-seg8-wide100-udiff-e20-swa10": dict(
        SWA20_B8_SEG8, wide_scales=100.0, input_differences="auto", max_epochs=20, average_epochs=10
    ),
    # today's regressor defaults with attention over at most 64 tokens (docs/accuracy.md, "Candidate default for time:
    # attention over at most 64 tokens in the regressor")
    "short-segments-ridge-swa20-cap900-auto-dil-tok64": dict(
        SWA20_RIDGE, max_steps=900, input_differences="auto", dilation_per_layer=True, attention_tokens=64
    ),
}
UEA = ["ArticularyWordRecognition", "AtrialFibrillation", "BasicMotions", "ERing", "Epilepsy", "FingerMovements",
       "Handwriting", "JapaneseVowels", "Libras", "StandWalkJump", "UWaveGestureLibrary"]  # fmt: skip
TSER = ["BitcoinSentiment", "CardanoSentiment", "ChilledWaterPredictor", "Covid3Month", "FloodModeling1", "Tecator"]
DEFAULT_DIRS = ["../shared/datasets/UEA", "../shared/datasets/TSER"]
#: Long series pool tokens before attention as in the CPU profiles of the tables (docs/tables.md).
DATASET_PARAMS = {"UWaveGestureLibrary": {"attention_downsample": 2}, "AtrialFibrillation": {"attention_downsample": 4},
                  "StandWalkJump": {"attention_downsample": 4}}  # fmt: skip


def _load_split(name: str, dirs, split: str):
    """(X, y) of dataset ``name``'s ``split`` from the first of ``dirs`` that has it; None where none has."""
    from eadct.datasets import DatasetNotFoundError, load_dataset

    for d in dirs:
        try:
            return load_dataset(name, split, d, progress=False)
        except DatasetNotFoundError:
            continue
    return None


def _load_train(name: str, dirs):
    return _load_split(name, dirs, "train")


def inner_split(y, holdout: float, seed: int, classification: bool):
    """(fit, hold-out) indices of TRAIN: stratified by class, at least one series per class kept in each
    part where the class has two or more."""
    rng = np.random.RandomState(seed)
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if classification else [np.arange(len(y))]
    fit, held = [], []
    for members in groups:
        members = rng.permutation(members)
        n_held = min(len(members) - 1, max(1 if len(members) > 1 else 0, int(round(holdout * len(members)))))
        held.extend(members[:n_held])
        fit.extend(members[n_held:])
    return np.sort(np.array(fit)), np.sort(np.array(held))


def resolve(candidate: str, cls) -> dict:
    """The estimator parameters of ``candidate`` for ``cls``: ``CANDIDATES[candidate]`` on top of the reference
    defaults (those of the reference that ``cls`` has). Until November 2026 candidates sat on top of the defaults
    of the day, so a name rerun after a default changed fitted another model (docs/accuracy.md, "Diagnostic: the
    screen's gains on fresh hold-outs"); every stored row had run with the reference's values for the settings
    its candidate does not name."""
    from eadct.tables import REFERENCE_DEFAULTS

    own = cls().get_params()
    return {**{k: v for k, v in REFERENCE_DEFAULTS.items() if k in own}, **CANDIDATES[candidate]}


def fit_candidate(name, candidate, X, y, seed, holdout=1 / 3):
    """The screen's fit of ``candidate`` on dataset ``name``'s TRAIN (X, y): split by ``inner_split``, the
    estimator fitted on the fitted part. Returns (estimator, fit indices, hold-out indices, fit seconds)."""
    from eadct import EADCTClassifier, EADCTRegressor
    from eadct.tables import subset

    classification = not np.issubdtype(np.asarray(y).dtype, np.floating)
    fit_idx, held_idx = inner_split(np.asarray(y), holdout, seed, classification)
    cls = EADCTClassifier if classification else EADCTRegressor
    params = {"missing_values": "interpolate", "memory_guard": "auto", "device": "cpu", "random_state": seed,
              **DATASET_PARAMS.get(name, {}), **resolve(candidate, cls)}  # fmt: skip
    est = cls(**params)
    tic = time.perf_counter()
    est.fit(subset(X, fit_idx), np.asarray(y)[fit_idx])
    return est, fit_idx, held_idx, time.perf_counter() - tic


def _run_one(name, candidate, X, y, seed, holdout):
    import torch

    from eadct.tables import score, subset

    classification = not np.issubdtype(np.asarray(y).dtype, np.floating)
    est, fit_idx, held_idx, fit_s = fit_candidate(name, candidate, X, y, seed, holdout)
    X_held, y_held = subset(X, held_idx), np.asarray(y)[held_idx]
    value = score("classification" if classification else "regression", y_held, est.predict(X_held))
    epochs = sum(1 for r in est.history_ if r["stage"] == "finetune")
    extra = {"log_loss": holdout_log_loss(est, X_held, y_held)} if classification else {}
    return dict(candidate=candidate, dataset=name, seed=seed, task="classification" if classification else "regression",
                score=value, **extra, fit_s=fit_s, n_fit=len(fit_idx), n_holdout=len(held_idx),
                finetune_epochs=epochs, params=CANDIDATES[candidate], settings=resolve(candidate, type(est)),
                threads=torch.get_num_threads())  # fmt: skip


def holdout_log_loss(est, X_held, y_held) -> float:
    """The mean negative log-probability that the classifier gives each held-out series' class (natural log;
    probabilities clipped at 1e-15, as scikit-learn's ``log_loss``). A proper score of the whole predicted
    distribution, recorded beside the accuracy; it reads the networks' confidence as much as their ranking of the
    classes, so it is a second reading, not the rules' (docs/accuracy.md, "Candidates: the maps' weights and half
    the dropout, and the screen's log-loss against a known effect")."""
    return log_loss_of(est.predict_proba(X_held), np.searchsorted(est.classes_, y_held))


def log_loss_of(proba, truth) -> float:
    """The mean negative log of ``proba[i, truth[i]]`` (natural log, clipped at 1e-15): ``holdout_log_loss`` of
    probabilities already computed."""
    proba, truth = np.asarray(proba), np.asarray(truth)
    return float(-np.mean(np.log(np.clip(proba[np.arange(len(truth)), truth], 1e-15, 1.0))))


def read_results(path: Path) -> list[dict]:
    """The finished rows (a line cut by a kill is skipped: that fit runs again)."""
    return read_jsonl(Path(path))


def report(rows: list[dict], candidates: list[str], baseline: str | None = None, cells: bool = True) -> str:
    """The screen's table (Markdown): hold-out scores per dataset (mean over its seeds), then each candidate
    against ``baseline`` (default: the first) on the datasets both finished, each compared over the seeds both
    have (classification: accuracy difference; regression: RMSE ratio)."""
    cell = {}
    for r in rows:
        cell.setdefault((r["candidate"], r["dataset"]), []).append(r)
    names = [c for c in candidates if any(k[0] == c for k in cell)]
    mean = {k: float(np.mean([r["score"] for r in v])) for k, v in cell.items()}
    task = {r["dataset"]: r["task"] for r in rows}
    order = [d for d in UEA + TSER if d in task] + sorted(d for d in task if d not in UEA + TSER)
    secs = {k: float(np.mean([r["fit_s"] for r in v])) for k, v in cell.items()}
    lines = ["| dataset | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)] if cells else []
    for d in order if cells else []:
        if any((c, d) in mean for c in names):
            row = [f"{mean[(c, d)]:.4g} ({secs[(c, d)]:.0f} s)" if (c, d) in mean else "" for c in names]
            lines.append(f"| {d} | " + " | ".join(row) + " |")
    first = baseline if baseline in names else (names[0] if names else None)
    seeds = {k: {r["seed"]: r["score"] for r in v} for k, v in cell.items()}

    def paired(c, d):
        """Mean scores of ``c`` and of ``first`` on ``d`` over the seeds both have (None: no common seed)."""
        common = sorted(set(seeds.get((c, d), {})) & set(seeds.get((first, d), {})))
        if not common:
            return None
        return tuple(float(np.mean([seeds[(k, d)][s] for s in common])) for k in (c, first))

    lines += [f"\nAgainst `{first}` on the datasets both finished, over the seeds both have there:", "",
              "| candidate | accuracy: mean difference (W / T / L, n) | RMSE: mean ratio (W / T / L, n) | "
              "fit time: mean ratio |", "|---|---|---|---|"]  # fmt: skip
    for c in [n for n in names if n != first]:
        row = []
        for kind in ("classification", "regression"):
            both = {d: p for d in order if task[d] == kind and (p := paired(c, d)) is not None}
            if not both:
                row.append("-")
                continue
            if kind == "classification":
                diff = np.array([a - b for a, b in both.values()])
                value = f"{diff.mean():+.4f}"
            else:
                ratio = np.array([a / b for a, b in both.values()])
                diff, value = 1 - ratio, f"{ratio.mean():.3f}"
            w, lo = int(np.sum(diff > 1e-12)), int(np.sum(diff < -1e-12))
            row.append(f"{value} ({w} / {len(both) - w - lo} / {lo}, {len(both)})")
        done = [d for d in order if (c, d) in secs and (first, d) in secs]
        time_ratio = np.mean([secs[(c, d)] / secs[(first, d)] for d in done]) if done else float("nan")
        lines.append(f"| {c} | {row[0]} | {row[1]} | {time_ratio:.2f} |")
    losses = {k: {r["seed"]: r["log_loss"] for r in v if "log_loss" in r} for k, v in cell.items()}
    losses = {k: v for k, v in losses.items() if v}
    return "\n".join(lines + pair_lines(seeds, task, [n for n in names if n != first], first, losses))


def matched_pairs(values: dict, c: str, first: str, datasets=None) -> list[tuple[float, float]]:
    """``(c's value, first's value)`` over the (set, seed) pairs both have in ``values`` ((candidate, dataset) ->
    {seed: value}), of ``datasets`` only where given, in the order of ``values`` and then of the seeds."""
    return [(values[(c, d)][s], values[(first, d)][s]) for (k, d) in values
            if k == c and (datasets is None or d in datasets) and (first, d) in values
            for s in sorted(set(values[(c, d)]) & set(values[(first, d)]))]  # fmt: skip


def pair_lines(seeds: dict, task: dict, candidates: list[str], first: str, losses: dict | None = None) -> list[str]:
    """What the screen's rules count: each candidate against ``first`` over the (set, seed) pairs both have,
    accuracy as the mean difference, RMSE as the geometric-mean ratio, with wins / ties / losses; then, where the
    rows have it, the classifiers' hold-out log-loss (``losses``: (candidate, dataset) -> {seed: log-loss})."""
    lines = []
    for c in candidates:
        for kind in ("classification", "regression"):
            pairs = matched_pairs(seeds, c, first, {d for d in task if task[d] == kind})
            if not pairs:
                continue
            a, b = np.array(pairs).T
            gain = a - b if kind == "classification" else np.log(b / a)
            se = gain.std(ddof=1) / np.sqrt(len(gain)) if len(gain) > 1 else float("nan")
            if kind == "classification":
                value = f"mean difference {gain.mean():+.4f} (standard error {se:.4f})"
            else:
                value = f"geometric-mean RMSE ratio {np.exp(-gain.mean()):.3f} (log-ratio's standard error {se:.4f})"
            w, lo = int(np.sum(gain > 1e-12)), int(np.sum(gain < -1e-12))
            lines.append(f"\n`{c}` over the {len(pairs)} (set, seed) pairs of {kind}: {value}, "
                         f"{w} / {len(pairs) - w - lo} / {lo} (wins / ties / losses; sign-flip p = "
                         f"{sign_flip_p(gain):.3f}).")  # fmt: skip
    return lines + log_loss_lines(losses or {}, candidates, first)


def pair_table(rows: list[dict], candidate: str, baseline: str) -> str:
    """``candidate`` against ``baseline`` pair by pair (Markdown): a row per dataset, a column per seed both have,
    each cell "baseline -> candidate" hold-out score, with the log-loss in brackets where both rows have it."""
    by = {(r["candidate"], r["dataset"], r["seed"]): r for r in rows}
    sets = [d for d in UEA + TSER + sorted({r["dataset"] for r in rows}) if (candidate, d) in {k[:2] for k in by}]
    seeds = sorted({k[2] for k in by if k[0] == candidate and (baseline, k[1], k[2]) in by})
    lines = ["| dataset | " + " | ".join(f"seed {s}" for s in seeds) + " |", "|---|" + "---|" * len(seeds)]
    for d in dict.fromkeys(sets):
        cells = []
        for s in seeds:
            a, b = by.get((baseline, d, s)), by.get((candidate, d, s))
            form = ".3f" if a and a["task"] == "classification" else ".4g"
            cell = f"{a['score']:{form}} -> {b['score']:{form}}" if a and b else ""
            if a and b and "log_loss" in a and "log_loss" in b:
                cell += f" ({a['log_loss']:.3f} -> {b['log_loss']:.3f})"
            cells.append(cell)
        lines.append(f"| {d} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def log_loss_lines(losses: dict, candidates: list[str], first: str) -> list[str]:
    """Each candidate against ``first`` by hold-out log-loss over the classification (set, seed) pairs where
    both rows recorded it (rows written before the screen recorded it have none): the mean difference (negative:
    the candidate's probabilities fit the hold-outs better), wins / ties / losses, and a sign-flip permutation
    p-value of the mean difference over the pairs (two-sided, exact up to 16 pairs, else 20,000 draws, seeded)."""
    lines = []
    for c in candidates:
        pairs = matched_pairs(losses, c, first)
        if not pairs:
            continue
        a, b = np.array(pairs).T
        diff = a - b
        w, lo = int(np.sum(diff < -1e-12)), int(np.sum(diff > 1e-12))
        lines.append(f"\n`{c}` by hold-out log-loss over {len(diff)} (set, seed) pairs: mean difference "
                     f"{diff.mean():+.4f} ({w} / {len(diff) - w - lo} / {lo} wins / ties / losses; sign-flip "
                     f"p = {sign_flip_p(diff):.3f}).")  # fmt: skip
    return lines


def sign_flip_p(diff: np.ndarray, draws: int = 20_000) -> float:
    """Two-sided p-value of the paired mean ``diff.mean()`` under random signs (the paired permutation test)."""
    diff = np.asarray(diff, dtype=float)
    n = len(diff)
    if n <= 16:
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
    else:
        signs = np.random.default_rng(0).choice([-1.0, 1.0], size=(draws, n))
    null = np.abs((signs * diff).mean(axis=1))
    return float(np.mean(null >= abs(diff.mean()) - 1e-12))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES))
    parser.add_argument("--datasets", nargs="+", default=UEA + TSER)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--holdout", type=float, default=1 / 3, help="share of TRAIN held out (default 1/3)")
    parser.add_argument("--data-dir", action="append", default=None)
    parser.add_argument("--out", default="results/screen/screen.jsonl")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (one per process when parallel)")
    parser.add_argument("--report", action="store_true", help="print the table of what has finished and stop")
    parser.add_argument("--baseline", nargs="+", default=None, help="with --report: compare against these")
    parser.add_argument("--pairs", action="store_true", help="with --baseline: each candidate pair by pair")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.report:
        rows = read_results(out)
        print("# Screen of candidate defaults on TRAIN only (hold-out of TRAIN, never TEST)\n")
        print(f"Command: `python benchmarks/screen_defaults.py` (see its docstring); hold-out {args.holdout:.2f} of "
              f"TRAIN, seeds {sorted({r['seed'] for r in rows})}, torch threads "
              f"{sorted({r['threads'] for r in rows})} per process. Cells: hold-out accuracy or RMSE (mean fit "
              "time). Candidates:\n")  # fmt: skip
        for name, params in CANDIDATES.items():
            if any(r["candidate"] == name for r in rows):
                print(f"- `{name}`: {params}")
        for i, base in enumerate(args.baseline or [None]):
            print()
            print(report(rows, list(CANDIDATES), base, cells=i == 0))
        if args.pairs and args.baseline:
            for name in dict.fromkeys(r["candidate"] for r in rows if r["candidate"] != args.baseline[0]):
                print(f"\n`{args.baseline[0]}` -> `{name}`, hold-out score (log-loss) per pair:\n")
                print(pair_table(rows, name, args.baseline[0]))
        return
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in args.datasets:
        data = _load_train(name, args.data_dir or DEFAULT_DIRS)
        if data is None:
            print(f"{name}: not found, skipped", flush=True)
            continue
        X, y = data
        for seed in args.seeds:
            for candidate in args.candidates:
                done = {(r["candidate"], r["dataset"], r["seed"]) for r in read_results(out)}
                if (candidate, name, seed) in done:
                    continue
                row = _run_one(name, candidate, X, y, seed, args.holdout)
                append_jsonl(out, row)
                print(f"{name} seed {seed} {candidate}: {row['score']:.4g} in {row['fit_s']:.0f} s", flush=True)
    print(report(read_results(out), args.candidates))


if __name__ == "__main__":
    main()
