"""make bench compares otter run's results.json with make grade's CSV: the same scores, in
the two forms Otter writes them."""

from kit_autograder.bench import as_in_results


def test_a_score_otter_rounds_in_results_json_is_the_csvs_whole_score():
    # 5 points over 6 cases, one failed: Otter's results.json says 4.16667.
    whole = 5 * 5 / 6
    theirs = {"attention": round(whole, 5), "multihead": 3.0}
    assert whole != theirs["attention"]  # control: compared as written, they differ
    assert as_in_results({"attention": str(whole), "multihead": "3.0"}, theirs) == theirs


def test_a_different_score_still_differs():
    theirs = {"attention": 4.16667}
    assert as_in_results({"attention": "4.0", "multihead": "3.0"}, theirs) != theirs
    assert as_in_results({"attention": "4.1666", "multihead": "3.0"}, theirs) != theirs
