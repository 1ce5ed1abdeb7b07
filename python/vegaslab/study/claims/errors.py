"""What stops a claim from being judged: a malformed or failing expression, missing data, a budget
exceeded, or something not available here."""


class ClaimError(Exception):
    """The expression is malformed, refers to something that does not exist, or cannot be
    evaluated."""


class ClaimMissingData(ClaimError):
    """The data a claim needs is missing, NaN, infinite or empty, or a variant has failed
    seeds. The message starts with ``missing data:``."""


class ClaimBudgetExceeded(ClaimError):
    """The evaluation went over one of the budgets. The message starts with ``budget exceeded:``."""


class ClaimSkipped(Exception):
    """The expression needs something that is not available here (e.g. vegaslab.study.metrics)."""


def missing_data(msg: str) -> ClaimMissingData:
    return ClaimMissingData(f"missing data: {msg}")


def over_budget(msg: str) -> ClaimBudgetExceeded:
    return ClaimBudgetExceeded(f"budget exceeded: {msg}")
