"""three_address.py written without goto: the oracle of its output."""


def factorial(n):
    result = 1
    while n > 1:
        result *= n
        n -= 1
    return result


def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


for n in range(1, 13):
    f = factorial(n)
    print(n, f % 1000003, gcd(f, 2 ** n + 1), collatz_steps(n))
