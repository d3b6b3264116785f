"""axe-core's WCAG 2.0 and 2.1 A and AA rules, run in Chromium on a page the kit makes (issue 25).

Spanish public universities must meet WCAG 2.1 AA (Real Decreto 1112/2018, EN 301 549). axe-core
comes bundled in axe-playwright-python, so nothing is downloaded.
"""

WCAG_A_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def wcag_violations(page):
    """``(number of violations, axe's readable report)`` for the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=WCAG_A_AA)
    return results.violations_count, results.generate_snapshot()


def violated_rules(page):
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=WCAG_A_AA)
    return {violation["id"] for violation in results.response["violations"]}
