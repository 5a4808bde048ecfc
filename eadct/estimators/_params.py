"""The numpydoc text of the hyperparameters the estimators share (one source for all three)."""

ARCHITECTURE_DOC = """\
    architecture : str, default="ea-dc-transformer"
        The network, one of the rows of the paper's tables: "ea-dc-transformer"; "dc-transformer"
        (alpha = beta = 0); "transformer" (TST: attention_ratio 1, alpha = beta = 0); "dilated-conv"
        (attention_ratio 0); "lstm" and "gru" (``n_blocks`` layers of width ``d_model``); "resnet" (Wang et
        al. 2017, width 128). The transformer family overrides the parameters named in brackets.
    alpha : float, default=0.5
        Paper's alpha: weight of the previous layer's attention logits in the input of
        the attention-map convolution (``A_in = alpha * A_prev + (1 - alpha) * S``).
        0 cuts the skip connection between maps ("w/o skip" ablation).
    beta : float, default=0.3
        Paper's beta: weight of the ``ReLU(Conv2d)`` path in the evolved logits
        (``A = beta * ReLU(Conv(A_in)) + (1 - beta) * A_in``). 0 builds no map
        convolution ("w/o convolution"); ``alpha = beta = 0`` is the DC-Transformer.
        The authors' code calls these two weights the other way round.
    attention_ratio : float, default=0.25
        The paper's p: share of ``d_model`` given to the attention branch; the dilated
        causal convolution branch gets ``1 - p``. 1 gives an EA-Transformer, 0 a dilated
        convolution network. ``attention_ratio * d_model`` must be divisible by ``n_heads``.
    d_model : int, default=64
        Model width d.
    n_heads : int, default=8
        Attention heads K (the channels of the map convolution).
    n_blocks : int, default=2
        Blocks of 2 EA-DC layers each; the conv dilation doubles per block.
    attention_kernel_size : int, default=3
        Kernel of the 2D convolution over the attention maps (1, 3 or 5 in the paper).
    d_ff : int, default=256
        Hidden width of the feed-forward network of each layer.
    dropout : float, default=0.1
        Dropout of the embedding, residual paths, attention weights and head.
    norm : {"batch", "layer"}, default="batch"
        BatchNorm over valid steps (as TST) or LayerNorm.
    checkpoint_attention : bool or "auto", default="auto"
        True: run the attention-map path in blocks of query rows and recompute it block by block in
        backward instead of storing its (B, K, N, N) tensors (one map per layer stays). False: store
        them. "auto": on CPU, blocks where a layer's maps hold at least 2**24 values (e.g. batch 32,
        8 heads, N >= 256), where blocking measured both faster and leaner; stored maps below, where
        they are faster, on CUDA (an H100 ran the blocked step at 1.6x to 1.9x the stored one) and
        where the process keeps freed memory (``eadct.runtime.keep_freed_memory``: no page faults,
        stored maps faster); the memory guard proposes True where stored maps do not fit. Results
        agree within float tolerance (dropout masks are drawn per block). See docs/long_series.md for measurements.
    attention_downsample : int, default=1
        Average-pool the time steps by this factor before attention (maps of (N / r)^2) and repeat the
        result back to N steps, as the authors' code does for long series; the convolution branch keeps
        full resolution. 1 = off.
    pooling : {"mean", "max", "flatten"}, default="mean"
        Pooling of the step representations into one vector per series over its valid steps.
        ``"flatten"`` is TST's head input: the N x d step representations of the longest training series
        length N, concatenated (shorter series are zero-padded); the model then accepts series of at most N
        steps, and ``transform`` returns N * d features.
"""

TRAINING_DOC = """\
    lr : float, default=1e-3
        Learning rate (constant).
    batch_size : int, default=32
    mask_ratio : float, default=0.15
        Share of input values masked in pretraining.
    mask_length : float, default=3.0
        Mean length of a masked run (geometric run lengths).
    validation_fraction : float, default=0.1
        Share of the training data held out (stratified for classification) to choose
        the best epoch. 0: no hold-out, the epoch with the lowest training loss is kept.
    n_iter_no_change : int or None, default=30
        Stop a stage after this many epochs without a better validation result.
    optimizer : torch.optim.Optimizer subclass or None, default=None
        None means ``torch.optim.RAdam`` (the paper's optimizer). Any optimizer class
        taking ``(params, lr=..., **optimizer_kwargs)`` works, torch-optimizer's too.
    optimizer_kwargs : dict or None, default=None
        Extra optimizer arguments; None means ``betas=(0.9, 0.99)`` for RAdam.
    clip_grad_norm : float or None, default=4.0
        Gradient clipping by total norm.
    missing_values : {"raise", "interpolate"}, default="raise"
        What to do with NaN in X: refuse with a ValueError, or fill by linear
        interpolation along time (a channel with no value in a series gets the
        channel's training mean).
    device : {"auto", "cpu", "cuda", ...} or torch.device, default="auto"
        "auto" takes CUDA when available.
    precision : {"auto", "float32", "bfloat16"}, default="auto"
        "auto" is bf16 autocast on CUDA and float32 on CPU.
    memory_guard : {"raise", "auto", "off"}, default="raise"
        Before training, the peak memory is estimated from the data shape and settings. Where it exceeds
        what the device has free, "raise" stops with a ValueError naming the estimate and settings that
        would fit; "auto" picks the first of them (checkpointing, then a smaller batch, then
        downsampling) and records it in ``memory_plan_``; "off" skips the check.
    checkpoint_path : str or path or None, default=None
        Where to save the training state after every epoch. A fit started again with
        the same parameters and data resumes from it (and a finished fit is loaded
        instead of retrained).
    random_state : int, RandomState or None, default=None
        Seeds initialisation, the validation split, shuffling, masks and dropout; the
        same int gives identical predictions on CPU.
    verbose : bool, default=False
        Progress bars (tqdm) with per-epoch losses.
"""
