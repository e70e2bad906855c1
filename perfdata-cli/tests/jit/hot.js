function hotLoopJs(n){ let s=0; for(let i=0;i<n;i++){ s = (s + i*i) % 1000003; } return s; }
let t=0; for(let k=0;k<300;k++){ t+=hotLoopJs(200000); } console.log(t);
