// unwind_jit_oracle's workload: a hot function called through three levels of
// JavaScript functions, each compiled by V8 into anonymous executable memory.
function hotLeaf(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s + i * i) % 1000003; } return s; }
function midTwo(n) { return hotLeaf(n) + 1; }
function midOne(n) { return midTwo(n) + 1; }
function outerJs(n) { let t = 0; for (let k = 0; k < 20; k++) { t += midOne(n); } return t; }
let t = 0; for (let r = 0; r < 15; r++) { t += outerJs(100000); } console.log(t);
