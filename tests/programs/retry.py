"""A retry loop as scripts wrote it for the old libraries: `label .begin` before a `try`,
`goto .begin` from its `except` handler; the `finally` runs on every attempt, the jump
back included."""
from goto import with_goto


class Flaky:
    def __init__(self, failures):
        self.failures = list(failures)
        self.calls = 0

    def fetch(self, key):
        self.calls += 1
        if self.failures and self.failures[0] == self.calls:
            self.failures.pop(0)
            raise ConnectionError("call %d for %s" % (self.calls, key))
        return key.upper()


@with_goto
def fetch_all(service, keys, log):
    results = []
    for key in keys:
        attempts = 0
        label .begin
        attempts += 1
        try:
            value = service.fetch(key)
        except ConnectionError as error:
            log.append("failed: %s" % error)
            if attempts < 3:
                goto .begin
            log.append("gave up on " + key)
            value = None
        finally:
            log.append("attempt %d for %s done" % (attempts, key))
        results.append((key, value, attempts))
    return results


log = []
print(fetch_all(Flaky([1, 2, 5, 6, 7]), ["alpha", "beta", "gamma", "delta"], log))
print("\n".join(log))
