"""The project's one number format and vocabulary (multiview_lab.formatting)."""

import math

import pytest

from multiview_lab import formatting as fmt


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (0.90344, 4, ".9034"),
        (-0.03125, 4, "-.0312"),
        (1.27061, 4, "1.2706"),
        (12.5, 1, "12.5"),
        (0.0, 4, ".0000"),
        (math.nan, 4, "–"),
    ],
)
def test_number(value, digits, text):
    assert fmt.number(value, digits) == text


def test_signed_and_mean_std():
    assert fmt.signed(0.0123) == "+.0123"
    assert fmt.signed(-0.0123) == "-.0123"
    # a difference that rounds to zero keeps two significant digits and its sign
    assert fmt.signed(-0.0000312) == "-.000031" and fmt.signed(0.00004, 4) == "+.000040"
    assert fmt.signed(0.00005) == "+.0001" and fmt.signed(0.0) == "+.0000"
    assert fmt.signed(-0.3, 0) == "-.30" and fmt.signed(math.nan) == "–"
    assert fmt.mean_std(0.5, 0.0707, n=2) == ".5000 ± .0707"
    # one repetition has no standard deviation, whatever std the summary holds (0)
    assert fmt.mean_std(0.5, 0.0, n=1) == ".5000 ± –"
    assert fmt.mean_std(0.5, math.nan) == ".5000 ± –"
    assert fmt.mean_std(math.nan, 0.1, n=3) == "–"


def test_words_labels_and_plain_text():
    assert fmt.words("fit_time_s") == "fit time (s)"
    assert fmt.words("lam") == r"$\lambda$"
    assert fmt.words("lam", math=False) == "λ"
    assert fmt.words("n_train", math=False) == "training examples n"
    assert fmt.words("some_key") == "some key"
    assert fmt.words("accuracy", {"accuracy": "acc. (%)"}) == "acc. (%)"


@pytest.mark.parametrize(
    ("metric", "direction"),
    [
        ("accuracy", "max"),
        ("f1", "max"),
        ("error", "min"),
        ("hamming_loss", "min"),
        ("one_minus_average_precision", "min"),
        ("score_time_s", "min"),
        ("bound_mv_thm2", "min"),
        ("k", None),
    ],
)
def test_better(metric, direction):
    assert fmt.better(metric) == direction


def test_better_override_is_checked():
    assert fmt.better("k", {"k": "min"}) == "min"
    with pytest.raises(ValueError, match="better.k"):
        fmt.better("k", {"k": "lowest"})


def test_count_writes_the_noun_in_the_plural_unless_one():
    assert fmt.count(1, "unit") == "1 unit"
    assert fmt.count(0, "method") == "0 methods" and fmt.count(12, "model") == "12 models"
