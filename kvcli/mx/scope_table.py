"""kvcli.mx's scope, as a contract: for every public name of the MXNet 1.9.1 modules kvcli.mx
provides, whether kvcli supports it, and for each one it does not, what to use instead.

One :class:`Module` per MXNet module: ``supported`` names are provided with MXNet's behaviour
(``notes`` state where it is not bit-equal and why; ``tolerances`` give the tests' bounds);
``unsupported`` groups name the rest, each with one piece of advice. A declared-unsupported
name, and any MXNet module kvcli.mx does not provide, raises
:class:`kvcli.errors.OutOfScopeError` with that advice (:mod:`kvcli.mx.scope`);
``docs/mxnet.md`` is generated from this table (``python -m kvcli.mx.docs docs/mxnet.md``).

To support a name: implement it in the kvcli module, then move it from its ``unsupported``
group to ``supported`` (tests/mx/test_scope.py checks the table against the modules and
against MXNet's recorded names, tests/data/mxnet_public_names.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Tolerance:
    """Where kvcli's numbers may differ from MXNet's: relative / absolute bounds, and why."""

    rtol: float
    atol: float
    why: str


@dataclass(frozen=True)
class Unsupported:
    """MXNet names kvcli.mx does not provide, and what to use instead (one line)."""

    names: tuple[str, ...]
    advice: str


@dataclass(frozen=True)
class Module:
    """One MXNet module: the kvcli module that provides it and the fate of each name."""

    mxnet: str
    kvcli: str
    supported: tuple[str, ...]
    unsupported: tuple[Unsupported, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)
    tolerances: dict[str, Tolerance] = field(default_factory=dict)


def names(text: str) -> tuple[str, ...]:
    """Whitespace-separated names as a tuple (the table's lists are written as text)."""
    return tuple(text.split())


def group(text: str, advice: str) -> Unsupported:
    return Unsupported(names(text), advice)


# ---------------------------------------------------------------------- advice shared by modules
_WHAT_KVCLI_IS = ("kvcli.mx gives MXNet's KVStore (mx.kv), optimizers (mx.optimizer), nd arrays and symbol "
                  "graphs to draw (mx.sym, mx.viz)")
_TRAINING = (f"kvcli.mx does not train or execute networks (Gluon, Module, executors, autograd, initializers, "
             f"metrics): {_WHAT_KVCLI_IS}; train with MXNet and give kvcli its arrays")
_NUMPY_INTERFACE = ("MXNet's NumPy interface (mx.np, mx.npx, np_array, use_np) is not provided: use mx.nd, or numpy "
                    "on x.asnumpy()")
_PLUMBING = "MXNet's C-library plumbing (handles, ctypes helpers, check_call): kvcli has no C library to call"
_SUBMODULE = "an MXNet submodule whose public names are in its package: use the package's names (mx.kv.create, ...)"
_LAYERS = ("a neural-network layer: kvcli.mx.nd computes MXNet's array maths for KVStore and optimizer code, not "
           "layers; describe networks with mx.sym (drawn by mx.viz) and run them with MXNet")
_FUSED = ("MXNet's fused optimizer kernel: use the optimizer classes (mx.optimizer.SGD(...).update(...) or "
          "kv.set_optimizer(...)), which compute these kernels' numbers")
_MATHS = ("not implemented in kvcli.mx.nd: compute it with numpy on x.asnumpy() and wrap the result with "
          "mx.nd.array(...)")
_LINALG = "MXNet's linear-algebra operators: use numpy.linalg on x.asnumpy()"
_RANDOM = ("not implemented: kvcli's random functions are mx.nd.random.uniform, normal, randn, randint, poisson, "
           "exponential, gamma and shuffle (mx.random too)")
_INTERNAL_ND = "MXNet's internal operator machinery (generated-operator modules, CachedOp, indexing helpers)"
_DLPACK = "DLPack is not provided: exchange arrays as numpy (x.asnumpy(), mx.nd.array(a))"
_SYMBOL_OPS = ("an operator kvcli.mx.sym does not build: kvcli draws and summarises graphs of the operators listed in "
               "docs/mxnet.md; a graph MXNet wrote with it loads with mx.sym.load(...) and draws")
_GPU = "kvcli computes on the CPU: there are no GPUs (mx.context.num_gpus() is 0)"

TABLE: tuple[Module, ...] = (
    Module(
        "mxnet", "kvcli.mx",
        supported=names("""
            AttrScope Context MXNetError attribute base context cpu cpu_pinned current_context gpu is_np_shape kv
            kvstore lr_scheduler nd ndarray np_shape optimizer random rnd set_np_shape sym symbol test_utils
            use_np_shape util visualization viz"""),
        unsupported=(
            group("gluon mod module model executor executor_manager callback metric monitor mon init initializer "
                  "rnn autograd", _TRAINING),
            group("io recordio image img", "kvcli.mx does not load data or images: read them with numpy or your "
                  "own reader and give kvcli the arrays"),
            group("np npx numpy numpy_extension np_symbol np_array is_np_array use_np use_np_array "
                  "numpy_dispatch_protocol numpy_op_fallback numpy_op_signature", _NUMPY_INTERFACE),
            group("engine profiler runtime library rtc tvmop operator contrib torch th onnx notebook api error "
                  "registry libinfo ndarray_doc symbol_doc",
                  "MXNet's runtime, extensions and internals are not provided: " + _WHAT_KVCLI_IS),
            group("name", "mx.name's naming scopes are not provided: name nodes explicitly (name='fc1')"),
            group("log", "mx.log is not provided: use Python's logging module"),
        ),
        notes={"np_shape": "only np_shape(False) (MXNet 1.x's default): turning NumPy shapes on is refused",
               "set_np_shape": "only set_np_shape(False): turning NumPy shapes on is refused",
               "use_np_shape": "a function it decorates is refused when called (NumPy shapes are not provided)"},
    ),
    Module(
        "mxnet.kvstore", "kvcli.mx.kvstore",
        supported=names("KVStore KVStoreBase create"),
        unsupported=(
            group("KVStoreServer kvstore_server", "kvcli's dist stores start their own servers (Ray): create the "
                  "store with mx.kv.create('dist_sync') (see docs/distributed.md)"),
            group("base kvstore", _SUBMODULE),
        ),
    ),
    Module(
        "mxnet.optimizer", "kvcli.mx.optimizer",
        supported=names("""
            AdaDelta AdaGrad Adam Adamax DCASGD FTML Ftrl LAMB LARS LBSGD NAG Nadam Optimizer RMSProp SGD SGLD
            Signum Test Updater ccSGD create get_updater register"""),
        unsupported=(
            group("NDabs", "mx.optimizer.NDabs is nd.abs imported by MXNet's module: use mx.nd.abs"),
            group("contrib", "MXNet's contrib optimizers (GroupAdaGrad) are not provided: use mx.optimizer.AdaGrad "
                  "or register your own class"),
            group("optimizer", _SUBMODULE),
        ),
        notes={"SGLD": "the noise comes from mx.random's stream (mx.random.seed), kvcli's numbers, not MXNet's",
               "LBSGD": "multi_precision updates the float32 master copy (MXNet 1.9.1 swaps master copy and "
                        "momentum)",
               "DCASGD": "momentum > 0 runs the documented update (MXNet 1.9.1 raises on multi-element weights)",
               "Updater": "get_states() returns kvcli's pickle-free state format, not a pickle"},
    ),
    Module(
        "mxnet.lr_scheduler", "kvcli.mx.lr_scheduler",
        supported=names("CosineScheduler FactorScheduler LRScheduler MultiFactorScheduler PolyScheduler"),
        unsupported=(group("pi", "mx.lr_scheduler.pi is math.pi imported by MXNet's module: use math.pi"),),
    ),
    Module(
        "mxnet.ndarray", "kvcli.mx.ndarray",
        supported=names("""
            Concat ElementWiseSum Flatten NDArray Reshape SliceChannel abs add add_n arange arccos arccosh arcsin
            arcsinh arctan arctanh argmax argmin array broadcast_add broadcast_axes broadcast_axis broadcast_div
            broadcast_equal broadcast_greater broadcast_greater_equal broadcast_lesser broadcast_lesser_equal
            broadcast_like broadcast_maximum broadcast_minimum broadcast_minus broadcast_mod broadcast_mul
            broadcast_not_equal broadcast_plus broadcast_power broadcast_sub broadcast_to cbrt ceil
            choose_element_0index clip concat concatenate cos cosh degrees divide dot elemwise_add elemwise_div
            elemwise_mul elemwise_sub empty equal erf exp expand_dims expm1 eye fill_element_0index fix flatten floor
            from_numpy full gamma gammaln greater greater_equal lesser lesser_equal linspace load load_frombuffer log
            log10 log1p log2 max maximum mean min minimum modulo moveaxis multiply nanprod nansum ndarray negative
            norm not_equal one_hot onehot_encode ones ones_like power prod radians random random_normal random_uniform
            rcbrt reciprocal relu reshape rint round rsqrt save sigmoid sign sin sinh slice slice_axis softsign sparse split
            sqrt square squeeze stack subtract sum take tan tanh topk transpose trunc waitall where zeros zeros_like"""),
        unsupported=(
            group("""Activation BatchNorm BatchNorm_v1 BilinearSampler CTCLoss Convolution Convolution_v1 Correlation
                  Crop Custom Deconvolution Dropout Embedding FullyConnected GridGenerator GroupNorm
                  IdentityAttachKLSparseReg InstanceNorm L2Normalization LRN LayerNorm LeakyReLU
                  LinearRegressionOutput LogisticRegressionOutput MAERegressionOutput MakeLoss Pad Pooling Pooling_v1
                  RNN ROIPooling SVMOutput SequenceLast SequenceMask SequenceReverse Softmax SoftmaxActivation
                  SoftmaxOutput SpatialTransformer UpSampling col2im ctc_loss depth_to_space hard_sigmoid im2col
                  log_softmax make_loss moments smooth_l1 softmax softmax_cross_entropy softmin
                  space_to_depth BlockGrad stop_gradient""", _LAYERS),
            group("""adam_update all_finite amp_cast amp_multicast ftml_update ftrl_update lamb_update_phase1
                  lamb_update_phase2 mp_lamb_update_phase1 mp_lamb_update_phase2 mp_nag_mom_update
                  mp_sgd_mom_update mp_sgd_update multi_all_finite multi_lars multi_mp_sgd_mom_update
                  multi_mp_sgd_update multi_sgd_mom_update multi_sgd_update multi_sum_sq nag_mom_update
                  preloaded_multi_mp_sgd_mom_update preloaded_multi_mp_sgd_update preloaded_multi_sgd_mom_update
                  preloaded_multi_sgd_update reset_arrays rmsprop_update rmspropalex_update sgd_mom_update
                  sgd_update signsgd_update signum_update""", _FUSED),
            group("""Cast SwapAxis argmax_channel argsort batch_dot
                  batch_take broadcast_hypot broadcast_logical_and broadcast_logical_or broadcast_logical_xor cast
                  crop cumsum diag erfinv flip gather_nd histogram identity
                  khatri_rao logical_and logical_not logical_or logical_xor max_axis min_axis pad pick
                  ravel_multi_index repeat reshape_like reverse scatter_nd shape_array size_array
                  slice_like sort split_v2 sum_axis swapaxes tile true_divide unravel_index""", _MATHS),
            group("cast_storage", "use x.tostype('row_sparse' / 'csr' / 'default')"),
            group("""normal uniform shuffle random_exponential random_gamma random_generalized_negative_binomial
                  random_negative_binomial random_poisson random_randint random_pdf_dirichlet random_pdf_exponential
                  random_pdf_gamma random_pdf_generalized_negative_binomial random_pdf_negative_binomial
                  random_pdf_normal random_pdf_poisson random_pdf_uniform sample_exponential sample_gamma
                  sample_generalized_negative_binomial sample_multinomial sample_negative_binomial sample_normal
                  sample_poisson sample_uniform""", _RANDOM),
            group("""linalg linalg_det linalg_extractdiag linalg_extracttrian linalg_gelqf linalg_gemm linalg_gemm2
                  linalg_inverse linalg_makediag linalg_maketrian linalg_potrf linalg_potri linalg_slogdet
                  linalg_sumlogdiag linalg_syrk linalg_trmm linalg_trsm""", _LINALG),
            group("""CachedOp gen__internal gen_contrib gen_image gen_linalg gen_op gen_sparse op utils register
                  get_indexing_dispatch_code get_oshape_of_gather_nd_op indexing_key_expand_implicit_axes""",
                  _INTERNAL_ND + " are not provided"),
            group("contrib image imdecode", "MXNet's contrib and image operators are not provided"),
            group("np npx numpy numpy_extension", _NUMPY_INTERFACE),
            group("from_dlpack to_dlpack_for_read to_dlpack_for_write", _DLPACK),
        ),
        notes={"topk": "equal values come in the order of their positions; MXNet's order of equal values is its C++ "
                       "sort's when it sorts partially (8*k <= n) or more than 16 elements (the values are MXNet's)",
               "waitall": "returns at once: kvcli computes eagerly"},
    ),
    Module(
        "mxnet.ndarray.sparse", "kvcli.mx.ndarray.sparse",
        supported=names("""
            BaseSparseNDArray CSRNDArray Context ElementWiseSum NDArray NotSupportedForSparseNDArray RowSparseNDArray
            abs add add_n arccos arccosh arcsin arcsinh arctan arctanh array broadcast_add broadcast_div
            broadcast_minus broadcast_mul broadcast_plus broadcast_sub cast_storage cbrt ceil clip concat cos cosh
            csr_matrix current_context degrees divide dot elemwise_add elemwise_div elemwise_mul elemwise_sub empty exp
            expm1 fix floor gamma gammaln log log10 log1p log2 mean multiply negative norm radians relu retain rint
            round row_sparse_array rsqrt sigmoid sign sin sinh slice sqrt square subtract sum tan tanh trunc where
            zeros zeros_like"""),
        unsupported=(
            group("Embedding FullyConnected LinearRegressionOutput LogisticRegressionOutput MAERegressionOutput "
                  "make_loss stop_gradient", _LAYERS),
            group("adagrad_update adam_update ftrl_update sgd_mom_update sgd_update", _FUSED),
            group("NDArrayHandle c_array_buf check_call op", _PLUMBING),
            group("integer_types mx_real_t numeric_types gs_retain native_array py_slice py_sum spsp",
                  "a name MXNet's sparse module imports for itself: use mx.base.<name>"),
        ),
        notes={"norm": "of a whole sparse array: the root of the stored values' sum of squares; MXNet takes BLAS's "
                       "dot, whose order can round the last bit differently on long arrays",
               "dot": "a dense product (MXNet's storage fallback) is numpy's BLAS: the last bit can differ",
               "slice": "a csr slice that selects nothing is refused (MXNet's fails too); a begin before -rows is "
                        "clamped as numpy does (MXNet's csr slice gives zeros there)"},
    ),
    Module(
        "mxnet.ndarray.random", "kvcli.mx.ndarray.random",
        supported=names("NDArray exponential gamma normal poisson randint randn shuffle uniform"),
        unsupported=(
            group("""exponential_like gamma_like generalized_negative_binomial generalized_negative_binomial_like
                  multinomial negative_binomial negative_binomial_like normal_like poisson_like uniform_like""",
                  _RANDOM),
            group("current_context numeric_types", "a name MXNet's module imports for itself: use "
                  "mx.current_context() / mx.base.numeric_types"),
        ),
        notes={name: "MXNet's distribution and seeding rules; the numbers are kvcli's generator's, not MXNet's"
               for name in names("exponential gamma normal poisson randint randn shuffle uniform")},
    ),
    Module(
        "mxnet.random", "kvcli.mx.random",
        supported=names("exponential gamma normal poisson randint randn seed shuffle uniform"),
        unsupported=(
            group("generalized_negative_binomial multinomial negative_binomial", _RANDOM),
            group("Context check_call integer_types", "a name MXNet's module imports for itself: use mx.Context / "
                  "mx.base.integer_types"),
        ),
        notes={"seed": "seeds kvcli's generator: the same seed gives the same numbers in kvcli, not MXNet's numbers"},
    ),
    Module(
        "mxnet.symbol", "kvcli.mx.symbol",
        supported=names("""
            Activation BatchNorm BlockGrad Cast Concat Convolution Deconvolution Dropout ElementWiseSum Embedding
            Flatten FullyConnected Group InstanceNorm L2Normalization LRN LayerNorm LeakyReLU LinearRegressionOutput
            LogisticRegressionOutput MAERegressionOutput MakeLoss Pooling RNN Reshape SVMOutput SliceChannel Softmax
            SoftmaxActivation SoftmaxOutput SpatialTransformer SwapAxis Symbol Variable abs add_n broadcast_add
            broadcast_div broadcast_maximum broadcast_minimum broadcast_minus broadcast_mul broadcast_plus
            broadcast_power broadcast_sub cast clip concat elemwise_add elemwise_div elemwise_mul elemwise_sub erf
            exp expand_dims flatten full identity load load_json log log_softmax make_loss max max_axis mean min
            min_axis negative norm ones ones_like prod relu reshape sigmoid smooth_l1 softmax softsign split sqrt
            square squeeze stack stop_gradient sum sum_axis swapaxes tanh transpose var zeros zeros_like"""),
        unsupported=(
            group("""BatchNorm_v1 BilinearSampler CTCLoss Convolution_v1 Correlation Crop Custom GridGenerator
                  GroupNorm IdentityAttachKLSparseReg Pad Pooling_v1 ROIPooling SequenceLast SequenceMask
                  SequenceReverse UpSampling adam_update all_finite amp_cast amp_multicast arange arccos arccosh arcsin
                  arcsinh arctan arctanh argmax argmax_channel argmin argsort batch_dot batch_take broadcast_axes
                  broadcast_axis broadcast_equal broadcast_greater broadcast_greater_equal broadcast_hypot
                  broadcast_lesser broadcast_lesser_equal broadcast_like broadcast_logical_and broadcast_logical_or
                  broadcast_logical_xor broadcast_mod broadcast_not_equal broadcast_to cast_storage cbrt ceil
                  choose_element_0index col2im cos cosh crop ctc_loss cumsum degrees depth_to_space diag dot erfinv
                  expm1 eye fill_element_0index fix flip floor ftml_update ftrl_update gamma gammaln gather_nd
                  hard_sigmoid histogram hypot im2col khatri_rao lamb_update_phase1 lamb_update_phase2 linalg_det
                  linalg_extractdiag linalg_extracttrian linalg_gelqf linalg_gemm linalg_gemm2 linalg_inverse
                  linalg_makediag linalg_maketrian linalg_potrf linalg_potri linalg_slogdet linalg_sumlogdiag
                  linalg_syrk linalg_trmm linalg_trsm linspace log10 log1p log2 logical_not maximum minimum moments
                  mp_lamb_update_phase1 mp_lamb_update_phase2 mp_nag_mom_update mp_sgd_mom_update mp_sgd_update
                  multi_all_finite multi_lars multi_mp_sgd_mom_update multi_mp_sgd_update multi_sgd_mom_update
                  multi_sgd_update multi_sum_sq nag_mom_update nanprod nansum normal one_hot pad pick pow power
                  preloaded_multi_mp_sgd_mom_update preloaded_multi_mp_sgd_update preloaded_multi_sgd_mom_update
                  preloaded_multi_sgd_update radians random_exponential random_gamma
                  random_generalized_negative_binomial random_negative_binomial random_normal random_pdf_dirichlet
                  random_pdf_exponential random_pdf_gamma random_pdf_generalized_negative_binomial
                  random_pdf_negative_binomial random_pdf_normal random_pdf_poisson random_pdf_uniform random_poisson
                  random_randint random_uniform ravel_multi_index rcbrt reciprocal repeat reset_arrays reshape_like
                  reverse rint rmsprop_update rmspropalex_update round rsqrt sample_exponential sample_gamma
                  sample_generalized_negative_binomial sample_multinomial sample_negative_binomial sample_normal
                  sample_poisson sample_uniform scatter_nd sgd_mom_update sgd_update shape_array shuffle sign
                  signsgd_update signum_update sin sinh size_array slice slice_axis slice_like softmax_cross_entropy
                  softmin sort space_to_depth split_v2 take tan tile topk trunc uniform unravel_index where""",
                  _SYMBOL_OPS),
            group("contrib gen__internal gen_contrib gen_image gen_linalg gen_op gen_sparse image linalg op random "
                  "register sparse symbol", "MXNet's symbol submodules and generated-operator machinery: build with "
                  "mx.sym's own functions"),
            group("np npx numpy numpy_extension", _NUMPY_INTERFACE),
        ),
        notes={"Symbol": "describes graphs for drawing, summaries and shape inference; it does not execute "
                         "(no bind / simple_bind / eval)"},
    ),
    Module(
        "mxnet.visualization", "kvcli.mx.visualization",
        supported=names("plot_network print_summary"),
        unsupported=(group("Symbol", "mx.viz.Symbol is the Symbol class MXNet's module imports: use mx.sym.Symbol"),),
    ),
    Module(
        "mxnet.base", "kvcli.mx.base",
        supported=names("""MXNetError NotImplementedForSymbol NotSupportedForSparseNDArray integer_types mx_real_t
                           numeric_types py_str string_types"""),
        unsupported=(
            group("""CachedOpHandle CudaKernelHandle CudaModuleHandle DLPackHandle DataIterCreatorHandle DataIterHandle
                  ExecutorHandle FunctionHandle KVStoreHandle MXCallbackList NDArrayHandle OpHandle ProfileHandle
                  RecordIOHandle RtcHandle SymbolHandle c2pyerror c_array c_array_buf c_handle_array c_str c_str_array
                  check_call ctypes2buffer ctypes2numpy_shared get_last_ffi_error libinfo mx_float mx_float_p mx_int
                  mx_int64 mx_uint""", _PLUMBING),
            group("basestring long", "Python 2 aliases: use str and int"),
            group("data_dir data_dir_default", "MXNet's data folder (~/.mxnet) is not used by kvcli"),
            group("add_fileline_to_docstring build_param_doc classproperty error_types register_error with_metaclass",
                  "MXNet's internal helpers for its own modules are not provided"),
        ),
    ),
    Module(
        "mxnet.context", "kvcli.mx.context",
        supported=names("Context cpu cpu_pinned current_context gpu num_gpus"),
        unsupported=(
            group("gpu_memory_info", _GPU),
            group("check_call classproperty with_metaclass", _PLUMBING),
        ),
        notes={"gpu": "names a device for MXNet code; kvcli computes on the CPU"},
    ),
    Module(
        "mxnet.util", "kvcli.mx.util",
        supported=names("get_gpu_count is_np_shape np_shape set_np_shape use_np_shape"),
        unsupported=(
            group("""is_np_array np_array use_np use_np_array set_np reset_np np_ufunc_legal_option wrap_np_binary_func
                  wrap_np_unary_func set_module""", _NUMPY_INTERFACE),
            group("get_cuda_compute_capability get_gpu_memory", _GPU),
            group("getenv setenv", "MXNet's C-library environment variables are not read by kvcli: kvcli's settings "
                  "are KVCLI_* environment variables (see docs/environment.md)"),
            group("c_str check_call py_str", _PLUMBING + " (py_str is mx.base.py_str)"),
        ),
        notes={"np_shape": "only np_shape(False) (MXNet 1.x's default): turning NumPy shapes on is refused"},
    ),
    Module(
        "mxnet.test_utils", "kvcli.mx.test_utils",
        supported=names("""
            Context almost_equal array assert_almost_equal assert_exception compare_ndarray_tuple compare_optimizer
            current_context default_context default_dtype mx np_reduce rand_ndarray rand_shape_2d rand_shape_3d
            rand_shape_nd rand_sparse_ndarray random_arrays random_sample same"""),
        unsupported=(
            group("""check_consistency check_gluon_hybridize_consistency check_numeric_gradient check_speed
                  check_symbolic_backward check_symbolic_forward numeric_grad same_symbol_structure simple_forward
                  DummyIter""", "MXNet's checks of executors, gradients and Gluon: kvcli does not execute symbols or "
                  "compute gradients"),
            group("""download download_model get_bz2_data get_cifar10 get_im2rec_path get_mnist get_mnist_iterator
                  get_mnist_pkl get_mnist_ubyte get_zip_data""", "kvcli.mx does not download datasets: fetch data "
                  "yourself and give kvcli the arrays"),
            group("""Features get_cuda_compute_capability has_tvm_ops is_aarch64_run is_cd_run is_op_runnable
                  list_gpus""", "MXNet's build and CI probes: kvcli runs on the CPU with numpy (no GPUs, no TVM)"),
            group("""assert_allclose assert_almost_equal_ignore_nan assert_almost_equal_with_err assign_each
                  assign_each2 chi_square_check checkShapes collapse_sum_like create_2d_tensor create_sparse_array
                  create_sparse_array_zd create_vector default_atols default_numeric_eps default_rtols
                  discard_stderr effective_dtype environment gen_buckets_probs_with_ppf get_atol get_etol
                  get_identity_mat get_identity_mat_batch get_rtol get_tolerance get_tols getenv locationError
                  mean_check new_matrix_with_real_eigvals_2d new_matrix_with_real_eigvals_nd new_orthonormal_matrix_2d
                  new_sym_matrix_with_real_eigvals_2d new_sym_matrix_with_real_eigvals_nd rand_coord_2d
                  random_uniform_arrays retry same_array
                  set_default_context setenv shuffle_csr_column_indices var_check verify_generator""",
                  "an MXNet test helper kvcli.mx.test_utils does not provide: use numpy.testing and numpy.random"),
            group("Symbol np_symbol ss use_np", "a name MXNet's test_utils imports for itself: use mx.sym.Symbol "
                  "or numpy"),
        ),
    ),
    Module(
        "mxnet.attribute", "kvcli.mx.attribute",
        supported=names("AttrScope"),
        unsupported=(group("classproperty string_types with_metaclass",
                           "MXNet's internal helpers for its own modules (string_types is mx.base.string_types)"),),
    ),
)
