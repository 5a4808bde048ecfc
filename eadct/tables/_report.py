"""Placeholder replaced below."""
def build_report(*a, **k):
    raise NotImplementedError
def collect_results(*a, **k):
    raise NotImplementedError
