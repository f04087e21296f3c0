/* flame_example.h - a hand-made call tree of a training step's memory, as
 * the call-tree builder would give it: Python, native, kernel, unknown and
 * pruned frames, 12 levels deep, wide at the top, names long enough to be
 * shortened, and callees too narrow to draw. Used by test_flame.c and by
 * flame_example.c (the picture to look at). */
#ifndef MEMPROF_FLAME_EXAMPLE_H
#define MEMPROF_FLAME_EXAMPLE_H

#include <memprof/flame.h>

#define FX_MiB 1048576ull

/* Preorder, by depth; self bytes and allocations of each frame alone. */
static const struct fx_row {
	unsigned depth;
	const char *name;
	int kind;
	uint64_t self_bytes, count;
} fx_rows[] = {
	{0, "all", MP_FLAME_OTHER, 0, 0},
	{1, "<module> (train.py:1)", MP_FLAME_PYTHON, 0, 0},
	{2, "main (train.py:88)", MP_FLAME_PYTHON, 0, 0},
	{3, "train_epoch (train.py:61)", MP_FLAME_PYTHON, 2 * FX_MiB, 40},
	{4, "_call_impl (torch/nn/modules/module.py:1501)", MP_FLAME_PYTHON, 0, 0},
	{5, "forward (model/transformer.py:212)", MP_FLAME_PYTHON, 0, 0},
	{6, "attention (model/layers/multi_head_attention_with_rotary_embeddings.py:144)", MP_FLAME_PYTHON, 6 * FX_MiB,
	 12},
	{7, "scaled_dot_product_attention (torch/nn/functional.py:5373)", MP_FLAME_PYTHON, 0, 0},
	{8, "at::native::_efficient_attention_forward(at::Tensor const&, at::Tensor const&)", MP_FLAME_NATIVE, 0, 0},
	{9, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc", MP_FLAME_NATIVE, 0, 0},
	{10, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::alloc_block", MP_FLAME_NATIVE, 0, 0},
	{11, "cudaMalloc", MP_FLAME_NATIVE, 400 * FX_MiB, 96},
	{8, "(other)", MP_FLAME_OTHER, 20 * FX_MiB, 310},
	{7, "linear (torch/nn/functional.py:2118)", MP_FLAME_PYTHON, 80 * FX_MiB, 48},
	{6, "mlp (model/layers/mlp.py:37)", MP_FLAME_PYTHON, 0, 0},
	{7, "gelu (torch/nn/functional.py:1686)", MP_FLAME_PYTHON, 0, 0},
	{8, "at::native::gelu_out_cuda", MP_FLAME_NATIVE, 10 * FX_MiB, 8},
	{9, "void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>", MP_FLAME_KERNEL, 140 * FX_MiB,
	 24},
	{7, "linear (torch/nn/functional.py:2118)", MP_FLAME_PYTHON, 100 * FX_MiB, 24},
	{6, "dropout (torch/nn/functional.py:1252)", MP_FLAME_PYTHON, FX_MiB / 2, 4},
	{6, "layer_norm (torch/nn/functional.py:2546)", MP_FLAME_PYTHON, FX_MiB / 3, 4},
	{6, "rotary (model/layers/rope.py:19)", MP_FLAME_PYTHON, FX_MiB / 4, 2},
	{5, "embedding (torch/nn/functional.py:2233)", MP_FLAME_PYTHON, 20 * FX_MiB, 2},
	{4, "backward (torch/_tensor.py:522)", MP_FLAME_PYTHON, 0, 0},
	{5, "torch::autograd::Engine::execute", MP_FLAME_NATIVE, 50 * FX_MiB, 30},
	{6, "torch::autograd::generated::MmBackward0::apply", MP_FLAME_NATIVE, 0, 0},
	{7, "at::native::mm_out_cuda", MP_FLAME_NATIVE, 0, 0},
	{8, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel",
	 MP_FLAME_KERNEL, 200 * FX_MiB, 64},
	{6, "torch::autograd::generated::SoftmaxBackward0::apply", MP_FLAME_NATIVE, 100 * FX_MiB, 16},
	{6, "??", MP_FLAME_UNKNOWN, 40 * FX_MiB, 9},
	{4, "step (torch/optim/adamw.py:184)", MP_FLAME_PYTHON, 0, 0},
	{5, "_multi_tensor_adamw (torch/optim/adamw.py:512)", MP_FLAME_PYTHON, 0, 0},
	{6, "torch::_foreach_add_", MP_FLAME_NATIVE, 100 * FX_MiB, 512},
	{3, "load_checkpoint (train.py:30)", MP_FLAME_PYTHON, 0, 0},
	{4, "load (torch/serialization.py:1025)", MP_FLAME_PYTHON, 0, 0},
	{5, "libc.so.6+0x9a1b2", MP_FLAME_NATIVE, 100 * FX_MiB, 1},
	{1, "libnccl.so.2+0x4f3a0", MP_FLAME_NATIVE, 64 * FX_MiB, 4},
	{1, "(other)", MP_FLAME_OTHER, 36 * FX_MiB, 2048},
};

#define FX_NODES (sizeof(fx_rows) / sizeof(fx_rows[0]))

/* The rows as nodes, totals and counts summed up the tree. */
static inline void fx_build(mp_flame_node_t out[FX_NODES])
{
	uint32_t at_depth[16];

	for (size_t i = 0; i < FX_NODES; i++) {
		const struct fx_row *r = &fx_rows[i];
		out[i] = (mp_flame_node_t){r->name, r->kind, r->self_bytes, r->self_bytes, r->count,
					   r->depth ? at_depth[r->depth - 1] : UINT32_MAX};
		at_depth[r->depth] = (uint32_t)i;
		for (uint32_t p = out[i].parent; p != UINT32_MAX; p = out[p].parent) {
			out[p].total_bytes += r->self_bytes;
			out[p].count += r->count;
		}
	}
}

#endif
