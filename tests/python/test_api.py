"""The `dsc` Python package on the build tree (PYTHONPATH=build/python): compiling, calling with
NumPy arrays and torch tensors without copies, binding weights, errors, introspection, threads.

Run by ctest (python_api); by hand:
    PYTHONPATH=build/python python3 tests/python/test_api.py -v
Numeric results are checked against NumPy at several shapes, including 1, primes and sizes that
are not multiples of the vector width.
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

import dsc

ROOT = pathlib.Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.dsc"

try:
    import torch
except ImportError:  # the torch cases are skipped, and ctest's skip check reports it
    torch = None

ELEMENTWISE = """
fn scale_shift(x: f32[N, D], s: f32[D], b: f32[D]) -> f32[N, D] where N >= 1, D <= 512 {
  return x * s + b
}

fn positive(x: f32[N, D]) -> bool[N, D] {
  return x > 0.0
}
"""

# The cache is updated in place: the call writes into the caller's array and returns it.
KV_APPEND = """
fn append(cache: f32[T, 4], row: f32[1, 4], prefix: f32[P]) -> f32[T, 4] where P + 1 <= T {
  return update_slice(cache, row, axis=0, start=P)
}
"""

SHAPES = [(1, 1), (2, 3), (7, 13), (17, 64), (31, 100)]


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mlp_reference(x, w1, b1, w2, b2):
    return softmax(np.maximum(x @ w1 + b1, 0) @ w2 + b2)


def mlp_weights(rng):
    return {"w1": (rng.standard_normal((784, 256)) * 0.05).astype(np.float32),
            "b1": rng.standard_normal(256).astype(np.float32),
            "w2": (rng.standard_normal((256, 10)) * 0.05).astype(np.float32),
            "b2": rng.standard_normal(10).astype(np.float32)}


class CompileAndCall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mlp = dsc.compile(MLP)
        cls.ew = dsc.compile(ELEMENTWISE)
        cls.rng = np.random.default_rng(0)

    def test_mlp_numpy_at_several_batch_sizes(self):
        w = mlp_weights(self.rng)
        for batch in (1, 2, 7, 13, 64):
            x = self.rng.standard_normal((batch, 784)).astype(np.float32)
            y = self.mlp.mlp(x, **w)
            self.assertIsInstance(y, np.ndarray)
            self.assertEqual(y.shape, (batch, 10))
            np.testing.assert_allclose(y, mlp_reference(x, **w), rtol=1e-4, atol=1e-5)

    def test_positional_keyword_and_item_access(self):
        w = mlp_weights(self.rng)
        x = self.rng.standard_normal((3, 784)).astype(np.float32)
        a = self.mlp.mlp(x, w["w1"], w["b1"], w["w2"], w["b2"])
        b = self.mlp["mlp"](x=x, **w)
        np.testing.assert_array_equal(a, b)

    def test_elementwise_shapes_and_bool_results(self):
        for n, d in SHAPES:
            x = self.rng.standard_normal((n, d)).astype(np.float32)
            s = self.rng.standard_normal(d).astype(np.float32)
            b = self.rng.standard_normal(d).astype(np.float32)
            np.testing.assert_allclose(self.ew.scale_shift(x, s, b), x * s + b, rtol=1e-6)
            mask = self.ew.positive(x)
            self.assertEqual(mask.dtype, np.bool_)
            np.testing.assert_array_equal(mask, x > 0)

    def test_strided_inputs_are_copied(self):
        x = self.rng.standard_normal((13, 7)).astype(np.float32)
        s = np.ones(7, np.float32)
        b = np.zeros(7, np.float32)
        fortran = np.asfortranarray(x)
        np.testing.assert_array_equal(self.ew.scale_shift(fortran, s, b), x)
        wide = self.rng.standard_normal((13, 14)).astype(np.float32)
        np.testing.assert_array_equal(self.ew.scale_shift(wide[:, ::2], s, b), wide[:, ::2])

    def test_save_and_load(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ew.so")
            self.ew.save(path)
            loaded = dsc.load(path)
            x = self.rng.standard_normal((5, 3)).astype(np.float32)
            s, b = np.full(3, 2, np.float32), np.ones(3, np.float32)
            np.testing.assert_array_equal(loaded.scale_shift(x, s, b), x * 2 + 1)
            with self.assertRaises(dsc.InputError):
                loaded.ir()

    def test_repr_shows_the_signature_and_where_clauses(self):
        text = repr(self.ew)
        self.assertIn("scale_shift(x: f32[N, D], s: f32[D], b: f32[D]) -> f32[N, D]", text)
        self.assertIn("D <= 512", text)
        self.assertIn("where", repr(self.ew.scale_shift))
        self.assertEqual(self.ew.scale_shift.where_clauses, ["1 <= N", "D <= 512"])
        self.assertIn("scale_shift", dir(self.ew))


class ZeroCopy(unittest.TestCase):
    def test_update_in_place_returns_the_callers_array(self):
        m = dsc.compile(KV_APPEND)
        for t, p in ((1, 0), (5, 2), (13, 12)):
            cache = np.zeros((t, 4), np.float32)
            row = np.arange(4, dtype=np.float32)[None, :] + p
            out = m.append(cache, row, np.zeros(p, np.float32))
            self.assertIs(out, cache)  # written into the caller's memory: no copy in or out
            np.testing.assert_array_equal(cache[p], row[0])

    def test_results_cross_to_torch_without_copies(self):
        if torch is None:
            self.skipTest("torch is not installed")
        m = dsc.compile(ELEMENTWISE)
        x = np.ones((4, 3), np.float32)
        y = m.scale_shift(x, np.ones(3, np.float32), np.ones(3, np.float32))
        t = torch.from_dlpack(y)
        self.assertEqual(t.data_ptr(), y.ctypes.data)
        back = np.from_dlpack(t)
        self.assertEqual(back.ctypes.data, y.ctypes.data)

    def test_torch_in_torch_out(self):
        if torch is None:
            self.skipTest("torch is not installed")
        m = dsc.compile(KV_APPEND)
        cache = torch.zeros(6, 4)
        row = torch.arange(4, dtype=torch.float32)[None, :]
        out = m.append(cache, row, torch.zeros(3))
        self.assertIs(out, cache)
        self.assertTrue(torch.equal(cache[3], row[0]))
        ew = dsc.compile(ELEMENTWISE)
        x = torch.randn(7, 5)
        s, b = torch.randn(5), torch.randn(5)
        y = ew.scale_shift(x, s, b)
        self.assertIsInstance(y, torch.Tensor)
        torch.testing.assert_close(y, x * s + b)
        # A tensor that requires grad is detached; a transposed one is copied.
        w = torch.randn(5, 7, requires_grad=True)
        torch.testing.assert_close(ew.scale_shift(w.t(), s, b), w.detach().t() * s + b)

    def test_generic_dlpack_results(self):
        m = dsc.compile(ELEMENTWISE)
        x = memoryview(np.ones((2, 3), np.float32))  # a buffer, not an array of a framework
        y = m.scale_shift(x, np.ones(3, np.float32), np.zeros(3, np.float32))
        self.assertTrue(hasattr(y, "__dlpack__"))
        self.assertEqual(np.from_dlpack(y).shape, (2, 3))


class Bind(unittest.TestCase):
    def test_bind_dict_then_pass_activations_only(self):
        rng = np.random.default_rng(1)
        w = mlp_weights(rng)
        m = dsc.compile(MLP).bind(w)
        self.assertTrue(m.mlp.is_bound("w1"))
        for batch in (1, 3, 11):
            x = rng.standard_normal((batch, 784)).astype(np.float32)
            np.testing.assert_allclose(m.mlp(x), mlp_reference(x, **w), rtol=1e-4, atol=1e-5)
        with self.assertRaises(dsc.InputError):
            m.mlp(x, w1=w["w1"])  # bound: passed once only
        with self.assertRaises(dsc.InputError):
            m.bind({"w_typo": w["w1"]})

    def test_bind_safetensors(self):
        try:
            from safetensors.numpy import save_file
        except ImportError:
            self.skipTest("safetensors is not installed")
        rng = np.random.default_rng(2)
        w = mlp_weights(rng)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mlp.safetensors")
            save_file(w, path)
            m = dsc.compile(MLP).bind(path)
        x = rng.standard_normal((5, 784)).astype(np.float32)
        np.testing.assert_allclose(m.mlp(x), mlp_reference(x, **w), rtol=1e-4, atol=1e-5)


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ew = dsc.compile(ELEMENTWISE)

    def test_hierarchy(self):
        self.assertTrue(issubclass(dsc.ShapeError, ValueError))
        self.assertTrue(issubclass(dsc.InputError, TypeError))
        self.assertTrue(issubclass(dsc.RuntimeError, RuntimeError))
        for cls in (dsc.CompileError, dsc.ShapeError, dsc.InputError, dsc.RuntimeError):
            self.assertTrue(issubclass(cls, dsc.Error))

    def test_compile_error_carries_the_diagnostics(self):
        with self.assertRaises(dsc.CompileError) as e:
            dsc.compile("fn f(x: f32[N]) -> f32[N] {\n  return x + y\n}\n")
        self.assertIn("<string>:2:14: error: unknown name 'y'", str(e.exception))
        with self.assertRaises(dsc.CompileError):
            dsc.compile(MLP, gemm="nonesuch")
        with self.assertRaises(dsc.CompileError):
            dsc.compile(MLP, entry="nonesuch")
        with self.assertRaises(dsc.CompileError):
            dsc.compile("/nonexistent/model.dsc")

    def test_shape_error_names_the_clause_and_values(self):
        x = np.ones((2, 600), np.float32)
        v = np.ones(600, np.float32)
        with self.assertRaises(dsc.ShapeError) as e:
            self.ew.scale_shift(x, v, v)
        self.assertIn("where D <= 512 violated: D = 600", str(e.exception))
        with self.assertRaises(dsc.ShapeError) as e:
            self.ew.scale_shift(np.ones((3, 4), np.float32), np.ones(5, np.float32),
                                np.ones(4, np.float32))
        self.assertIn("input 's' dim 0 is 5, but it must equal D = 4", str(e.exception))

    def test_input_errors(self):
        v = np.ones(4, np.float32)
        with self.assertRaises(dsc.InputError) as e:
            self.ew.scale_shift(np.ones((3, 4), np.float64), v, v)
        self.assertIn("input 'x' is f64[3, 4]; expected f32[N, D]", str(e.exception))
        with self.assertRaises(dsc.InputError):
            self.ew.scale_shift(np.ones(4, np.float32), v, v)  # rank
        with self.assertRaises(dsc.InputError) as e:
            self.ew.scale_shift(np.ones((3, 4), np.float32), v)
        self.assertIn("missing inputs: b: f32[D]", str(e.exception))
        with self.assertRaises(dsc.InputError):
            self.ew.scale_shift([[1.0]], v, v)
        with self.assertRaises(dsc.InputError):
            self.ew.scale_shift(np.ones((3, 4), np.float32), v, v, bias=v)

    def test_runtime_errors(self):
        with self.assertRaises(dsc.RuntimeError) as e:
            dsc.load("/nonexistent/model.so")
        self.assertIn("/nonexistent/model.so", str(e.exception))
        with tempfile.NamedTemporaryFile(suffix=".so") as f:
            f.write(b"not a shared library")
            f.flush()
            with self.assertRaises(dsc.RuntimeError):
                dsc.load(f.name)

    def test_cuda_without_a_gpu(self):
        if dsc.cuda_available():
            self.skipTest("a GPU is present: tests/gpu covers it")
        m = dsc.compile(ELEMENTWISE, target="cuda")
        self.assertEqual(m.scale_shift.device, "cuda")
        v = np.ones(4, np.float32)
        with self.assertRaises(dsc.Error) as e:
            m.scale_shift(np.ones((3, 4), np.float32), v, v)
        self.assertIn("CUDA", str(e.exception))


class CudaEmulated(unittest.TestCase):
    """target="cuda" on the CUDA block emulator (ctest python_cuda_emulated sets
    DSC_CUDA_EMULATE=1): arrays copied to the device with dsc.to_device, results on the device
    copied back with dsc.to_host, against NumPy at awkward shapes."""

    def setUp(self):
        if os.environ.get("DSC_CUDA_EMULATE") != "1":
            self.skipTest("needs DSC_CUDA_EMULATE=1 (ctest python_cuda_emulated)")

    def test_elementwise_and_matmul_on_the_emulated_device(self):
        self.assertTrue(dsc.cuda_available())
        ew = dsc.compile(ELEMENTWISE, target="cuda")
        mm = dsc.compile("fn mm(a: f32[N, K], b: f32[K, M]) -> f32[N, M] { return matmul(a, b) }",
                         target="cuda")
        rng = np.random.default_rng(5)
        for n, d in SHAPES:
            x = rng.standard_normal((n, d)).astype(np.float32)
            s = rng.standard_normal(d).astype(np.float32)
            b = rng.standard_normal(d).astype(np.float32)
            y = ew.scale_shift(dsc.to_device(x), dsc.to_device(s), dsc.to_device(b))
            self.assertEqual(y.__dlpack_device__()[0], 2)  # kDLCUDA
            np.testing.assert_allclose(dsc.to_host(y), x * s + b, rtol=1e-6)
            np.testing.assert_array_equal(dsc.to_host(ew.positive(dsc.to_device(x))), x > 0)
            a = rng.standard_normal((n, 5)).astype(np.float32)
            w = rng.standard_normal((5, d)).astype(np.float32)
            np.testing.assert_allclose(dsc.to_host(mm.mm(dsc.to_device(a), dsc.to_device(w))),
                                       a @ w, rtol=1e-4, atol=1e-4)

    def test_host_arrays_are_refused_by_a_cuda_function(self):
        ew = dsc.compile(ELEMENTWISE, target="cuda")
        v = np.ones(3, np.float32)
        with self.assertRaises(dsc.InputError) as e:
            ew.scale_shift(np.ones((2, 3), np.float32), v, v)
        self.assertIn("expected a CUDA tensor", str(e.exception))

    def test_to_device_refuses_other_devices(self):
        with self.assertRaises(dsc.InputError):
            dsc.to_device(np.ones(3, np.float32), "tpu")


class Introspection(unittest.TestCase):
    def test_check(self):
        r = dsc.check(MLP)
        self.assertIn("h: f32[B, 256]", r.shapes)
        self.assertIsInstance(r.facts, str)
        with self.assertRaises(dsc.CompileError):
            dsc.check("fn f(x: f32[N]) -> f32[M] { return x }")

    def test_prove(self):
        self.assertTrue(dsc.prove("n*4/2 == 2*n"))
        p = dsc.prove("S*2 <= 1024", assume=["S <= 600"])
        self.assertEqual(p.verdict, "disproved")
        s = p.counterexample["S"]
        self.assertTrue(s <= 600 and s * 2 > 1024)
        with self.assertRaises(dsc.CompileError):
            dsc.prove("S <= ")

    def test_explain_fusion_and_ir(self):
        m = dsc.compile(MLP)
        self.assertIn("kernel", m.explain_fusion())
        self.assertIn("after legalize", m.ir(after="legalize"))
        self.assertIn("define", m.ir(after="llvm"))
        with self.assertRaises(dsc.CompileError):
            m.ir(after="nonesuch")


class Threads(unittest.TestCase):
    """Calls release the GIL: another Python thread runs during a call, and two threads
    calling one module at once finish sooner than one after the other."""

    @classmethod
    def setUpClass(cls):
        cls.m = dsc.compile("fn mm(a: f32[N, K], b: f32[K, M]) -> f32[N, M] { return matmul(a, b) }")
        rng = np.random.default_rng(3)
        # Calls of several ms each, so that the GIL's hand-overs between calls (up to
        # sys.getswitchinterval(), 5 ms) are small beside them.
        cls.a = rng.standard_normal((640, 640)).astype(np.float32)
        cls.b = rng.standard_normal((640, 640)).astype(np.float32)

    def setUp(self):
        dsc.set_num_threads(1)

    def tearDown(self):
        dsc.set_num_threads(0)

    def test_other_threads_run_during_a_call(self):
        ticks = 0
        stop = threading.Event()

        def count():
            nonlocal ticks
            while not stop.is_set():
                ticks += 1

        counter = threading.Thread(target=count)
        counter.start()
        time.sleep(0.01)
        before = ticks
        for _ in range(20):
            self.m.mm(self.a, self.b)
        stop.set()
        counter.join()
        self.assertGreater(ticks - before, 1000, "the counting thread did not run during the calls")

    def test_two_threads_at_once_are_faster_than_one_after_the_other(self):
        if (os.cpu_count() or 1) < 2:
            self.skipTest("one CPU")
        ref = self.a @ self.b
        calls = 8

        def work(results):
            for _ in range(calls):
                results.append(self.m.mm(self.a, self.b))

        ratios = []
        for _ in range(3):
            serial: list = []
            t0 = time.perf_counter()
            work(serial)
            work(serial)
            serial_s = time.perf_counter() - t0
            parallel: list = []
            threads = [threading.Thread(target=work, args=(parallel,)) for _ in range(2)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            parallel_s = time.perf_counter() - t0
            ratios.append(parallel_s / serial_s)
            for r in serial + parallel:
                np.testing.assert_allclose(r, ref, rtol=1e-3, atol=1e-3)
        self.assertLess(min(ratios), 0.9, f"parallel/serial time ratios {ratios}")


if __name__ == "__main__":
    unittest.main()
