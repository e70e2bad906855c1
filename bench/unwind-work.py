# The workload of `WORKLOAD=python bench/unwind.sh`: C stacks of some depth through
# libpython, its json and re modules and libc (Python 3.11 evaluates Python calls in one
# C frame, so the depth comes from the C code it calls).
import json, re
def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)
def churn(k):
    s = 0
    for i in range(k):
        d = {"a": i, "b": [i, i*2, str(i)], "c": {"x": i % 7}}
        s += len(json.dumps(d))
        s += len(re.findall(r"\d", str(i) * 3))
    return s
for _ in range(16):
    fib(22); churn(20000)
