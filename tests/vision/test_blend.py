"""Blending two checkpoints (WiSE-FT), the detector's or the crop classifier's: the ends are the two networks, the
middle is between them."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="needs the train extra")
pytest.importorskip("ultralytics", reason="needs the train extra")

from vision.training.blend import blend_checkpoints, blend_state  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _states() -> tuple[dict, dict]:
    g = torch.Generator().manual_seed(0)
    earlier = {"w": torch.randn(3, 4, generator=g), "bn.num_batches_tracked": torch.tensor(5)}
    tuned = {"w": torch.randn(3, 4, generator=g), "bn.num_batches_tracked": torch.tensor(9)}
    return earlier, tuned


def test_blend_state_interpolates_floats_and_takes_counters_from_the_tuned_network() -> None:
    earlier, tuned = _states()
    assert torch.equal(blend_state(earlier, tuned, 0.0)["w"], earlier["w"])
    assert torch.equal(blend_state(earlier, tuned, 1.0)["w"], tuned["w"])
    mid = blend_state(earlier, tuned, 0.25)
    assert torch.allclose(mid["w"], 0.75 * earlier["w"] + 0.25 * tuned["w"])
    assert int(mid["bn.num_batches_tracked"]) == 9


@pytest.mark.parametrize("alpha", [-0.1, 1.5])
def test_blend_state_refuses_alpha_outside_0_1(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        blend_state(*_states(), alpha)


def test_blend_state_refuses_other_architectures() -> None:
    earlier, tuned = _states()
    with pytest.raises(ValueError, match="architecture"):
        blend_state(earlier, {**tuned, "extra": torch.zeros(1)}, 0.5)
    with pytest.raises(ValueError, match="architecture"):
        blend_state(earlier, {**tuned, "w": torch.zeros(2, 2)}, 0.5)


@pytest.mark.slow
def test_blend_of_the_shipped_checkpoint_with_itself_is_the_same_network(tmp_path: Path) -> None:
    shipped = ROOT / "models" / "zhuoji-tiles.pt"
    out = blend_checkpoints(shipped, shipped, 0.3, tmp_path / "blend.pt")
    a = torch.load(shipped, weights_only=False, map_location="cpu")["model"].float().state_dict()
    b = torch.load(out, weights_only=False, map_location="cpu")["model"].float().state_dict()
    assert a.keys() == b.keys()
    for key in a:
        assert torch.allclose(a[key], b[key], atol=1e-3), key


@pytest.mark.slow
def test_a_crop_classifier_blend_halfway_is_the_mean_and_exports(tmp_path: Path) -> None:
    from vision.training.train_classify import build_model, export_onnx

    g = torch.Generator().manual_seed(1)
    nets = []
    for name in ("a", "b"):
        net = build_model()
        with torch.no_grad():
            for t in net.state_dict().values():
                if t.is_floating_point():
                    t.copy_(torch.randn(t.shape, generator=g))
        torch.save({"model": net.state_dict(), "width": 32, "extra": 0, "epochs": 1}, tmp_path / f"{name}.pt")
        nets.append(net.state_dict())
    out = blend_checkpoints(tmp_path / "a.pt", tmp_path / "b.pt", 0.5, tmp_path / "mid.pt")
    mid = torch.load(out, weights_only=False, map_location="cpu")
    assert mid["width"] == 32 and mid["extra"] == 0
    for key, t in mid["model"].items():
        if t.is_floating_point():
            assert torch.allclose(t, (nets[0][key] + nets[1][key]) / 2), key
    assert export_onnx(out, tmp_path / "mid.onnx").stat().st_size > 100_000


def test_a_classifier_and_a_detector_checkpoint_are_not_blended(tmp_path: Path) -> None:
    torch.save({"model": {"w": torch.zeros(1)}, "width": 32}, tmp_path / "crops.pt")
    with pytest.raises(ValueError, match="crop classifier"):
        blend_checkpoints(tmp_path / "crops.pt", ROOT / "models" / "zhuoji-tiles.pt", 0.5, tmp_path / "x.pt")
