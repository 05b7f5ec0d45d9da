package timeline

// pageStyle is the page's whole style sheet, inline: the page loads
// nothing. Strokes do not scale, so lines keep their width when the plot
// stretches to the page or zooms.
const pageStyle = `
body{font:13px/1.4 system-ui,sans-serif;margin:12px 16px;color:#222;background:#fff}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:14px 0 2px}
code{font:12px ui-monospace,monospace;word-break:break-all}
.cmd,.summary,.note,.violation,.warn{margin:2px 0}.note{color:#555;max-width:110em}
.violation{color:#b00;font-weight:600}.warn{color:#a60}
.outcome.o-pass{color:#1a7f37}.outcome.o-correctness,.outcome.o-liveness,.outcome.o-error{color:#c00}.vname{color:#c00}
details.evidence{margin:4px 0}details.evidence ol{font:12px ui-monospace,monospace;margin:4px 0;max-height:24em;overflow:auto}
.legend{margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px}
.legend i{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:-1px;border:1px solid #0002}
.chart{margin:4px 0 10px;border-top:1px solid #ddd}.row{display:flex}.plots{flex:1;min-width:0}
svg.plot{display:block;cursor:grab;user-select:none}svg.axis{display:block;font-size:10px;fill:#555}
svg.axis text{text-anchor:middle}svg.axis text[text-anchor=start]{text-anchor:start}svg.axis text[text-anchor=end]{text-anchor:end}svg.axis .vmark{fill:#d00;font-size:11px}
.readout{font-size:11px;color:#555;height:14px}
.lane-label{font-size:12px;font-weight:600;fill:#222}.lane-label.marked{fill:#c00}.lane-sub{font-size:10px;fill:#777}
svg.plot *{vector-effect:non-scaling-stroke}
.lanebg{fill:#fafafa}
.s0{fill:#eee}.s1{fill:#b7e0b7}.s2{fill:#f7c46c}.s3{fill:#c3d0f2}.s4{fill:#7fa6ec}.s5{fill:#9a9a9a}.s6{fill:#3c3c3c}
.paused{fill:#e2d52a}.away{fill:#b07cd8}.partition{fill:#f3a1a1}.inflight{fill:#cdd9ea}.window{fill:#fff4d6}
.opband{fill:#2456b3;fill-opacity:.22;stroke:none}
.op,.commit,.view,.logview{fill:none;stroke-width:1.5}.op{stroke:#2456b3}.commit{stroke:#1a8a3a;stroke-width:3.5}.view{stroke:#d9822b}.logview{stroke:#f0c48f;stroke-width:3}
line{stroke:#888;stroke-width:1}
.k-crash{stroke:#d01c1c;stroke-width:2}.k-restart{stroke:#1a8a3a;stroke-width:2}.k-freeze{stroke:#000;stroke-width:2}
.k-pause,.k-resume{stroke:#c2b400;stroke-width:2}.k-storage_fault{stroke:#8a2be2}
.k-status{stroke:#d9822b}.k-start_view{stroke:#a0522d}.k-committed{stroke:#1a8a3a}.k-prepared{stroke:#2456b3}.k-acked{stroke:#5b8bd9}
.k-probe{stroke:#999}.k-reconciled{stroke:#c71585}.k-sent{stroke:#bbb}.pg{stroke:#b07cd8;stroke-opacity:.6}
.k-clog{stroke:#a0522d}.k-connection_reset{stroke:#555}.k-frame_corrupted{stroke:#c71585}.k-partition,.k-partition_heal{stroke:#d04040;stroke-width:2}
.k-nemesis{stroke:#000}.k-phase,.liveness{stroke:#333;stroke-width:1.5;stroke-dasharray:4 3}
.k-client_invoke{stroke:#7a8ca8}.k-client_complete{stroke:#333}.k-client_timeout{stroke:#777;stroke-width:2}
.k-replied{stroke:#1a8a3a}.k-denied{stroke:#e08a00}.k-indefinite{stroke:#d01c1c;stroke-width:2}
.rq{fill:#cdd9ea;stroke:#7a8ca8;stroke-width:.5}.rq.o-replied{fill:#b7e0b7}.rq.o-denied{fill:#f5d49a}.rq.o-indefinite{fill:#f3a1a1}.rq.o-open{fill:#e4e4e4}
.f{fill:none;stroke:#7a8ca8;stroke-opacity:.7}.f-prepare,.f-repair_prepare{stroke:#2456b3}.f-prepare_ok{stroke:#1a8a3a}.f-commit{stroke:#aaa}
.f-start_view_change,.f-do_view_change,.f-start_view,.f-request_start_view{stroke:#d9822b}
.many .f{stroke-opacity:.12}
.cite{stroke:#e00000!important;stroke-width:3!important;stroke-opacity:1!important}.named{stroke:#ff00aa!important;stroke-width:2.5!important}
.viol{stroke:#e00000;stroke-width:2}.grid{stroke:#ddd}
.inevitable{stroke:#000;stroke-width:2;stroke-dasharray:5 3}.lk-failed{fill:#f3a1a1;stroke:none}.lk-same{fill:#c00;fill-opacity:.75;stroke:none}
.hit{fill:transparent}.hit:hover{fill:#0000000d}
`

// legend explains the colours, in the page's markup.
const legend = `<div class="legend">` +
	`<span><i style="background:#b7e0b7"></i>normal</span><span><i style="background:#f7c46c"></i>view_change</span>` +
	`<span><i style="background:#7fa6ec"></i>recovering</span><span><i style="background:#c3d0f2"></i>booting (restarted)</span>` +
	`<span><i style="background:#3c3c3c"></i>down (crashed)</span><span><i style="background:#9a9a9a"></i>frozen</span>` +
	`<span><i style="background:#e2d52a"></i>paused</span><span><i style="background:#b07cd8"></i>partition groups not normal</span>` +
	`<span><i style="background:#2456b3"></i>op</span><span><i style="background:#1a8a3a"></i>commit</span>` +
	`<span><i style="background:#d9822b"></i>view</span><span><i style="background:#f0c48f"></i>log_view</span>` +
	`<span><i style="background:#d01c1c"></i>crash</span><span><i style="background:#1a8a3a"></i>restart</span>` +
	`<span><i style="background:#8a2be2"></i>disk fault</span><span><i style="background:#f3a1a1"></i>partition</span>` +
	`<span><i style="background:#cdd9ea"></i>request in flight</span><span><i style="background:#e00000"></i>violation, evidence</span>` +
	`<span><i style="background:#ff00aa"></i>the violation's ops</span>`

// legendSweep adds the likelihood lane's colours when there is one.
const legendSweep = `<span><i style="background:#c00"></i>branches failing as the run does</span>` +
	`<span><i style="background:#f3a1a1"></i>branches failing otherwise</span>`

// pageScript zooms and pans each chart (wheel, drag, double-click to
// reset) by moving its plot's viewBox, and redraws the time axis. The
// page reads without it. Each chart it set up says data-zoom="ready", which
// make timeline-check looks for in the DOM Chromium dumps.
const pageScript = `
(function(){
function step(span){var raw=span/8,p=Math.pow(10,Math.floor(Math.log10(raw))),m=raw/p;return p*(m<1.5?1:m<3.5?2:m<7.5?5:10);}
document.querySelectorAll('.chart').forEach(function(ch){
  var plot=ch.querySelector('svg.plot'),axis=ch.querySelector('svg.axis'),out=ch.querySelector('.readout');
  var t0=+ch.dataset.t0,unit=+ch.dataset.unit,W=+ch.dataset.w,H=+ch.dataset.h,viol=ch.dataset.viol?+ch.dataset.viol:null;
  var x=0,w=W,drag=null;
  var fx=[];ch.querySelectorAll('g.frames path').forEach(function(p){var m=/L(-?\d+)/.exec(p.getAttribute('d'));if(m)fx.push(+m[1]);});
  fx.sort(function(a,b){return a-b;});
  function count(a,b){var lo=0,hi=fx.length;while(lo<hi){var k=(lo+hi)>>1;if(fx[k]<a)lo=k+1;else hi=k;}var i=lo;hi=fx.length;while(lo<hi){var k=(lo+hi)>>1;if(fx[k]<=b)lo=k+1;else hi=k;}return lo-i;}
  function ticks(){
    var a=t0+x*unit,span=w*unit,st=step(span),d=Math.max(0,Math.ceil(-Math.log10(st/1e9))),s='';
    for(var v=Math.ceil(a/st)*st;v<=a+span;v+=st){var q=(v-a)/span*100;s+='<text'+(q<3?' text-anchor="start"':q>97?' text-anchor="end"':'')+' x="'+q.toFixed(2)+'%" y="12">'+(v/1e9).toFixed(d)+'s</text>';}
    if(viol!==null&&viol>=a&&viol<=a+span){s+='<text class="vmark" x="'+((viol-a)/span*100).toFixed(2)+'%" y="17">\u25bc</text>';}
    axis.innerHTML=s;
  }
  function draw(){
    plot.setAttribute('viewBox',x+' 0 '+w+' '+H);ticks();
    if(fx.length)ch.classList.toggle('many',count(x,x+w)>600);
  }
  function clamp(){w=Math.min(Math.max(w,Math.min(W,20)),W);x=Math.min(Math.max(x,0),W-w);}
  plot.addEventListener('wheel',function(e){
    e.preventDefault();var r=plot.getBoundingClientRect(),f=(e.clientX-r.left)/r.width,nw=w*(e.deltaY<0?0.7:1/0.7);
    nw=Math.min(Math.max(nw,Math.min(W,20)),W);x+=(w-nw)*f;w=nw;clamp();draw();
  },{passive:false});
  plot.addEventListener('mousedown',function(e){drag={cx:e.clientX,x:x};plot.style.cursor='grabbing';});
  window.addEventListener('mouseup',function(){drag=null;plot.style.cursor='';});
  plot.addEventListener('mousemove',function(e){
    var r=plot.getBoundingClientRect();
    if(drag){x=drag.x-(e.clientX-drag.cx)/r.width*w;clamp();draw();}
    out.textContent='t = '+((t0+(x+(e.clientX-r.left)/r.width*w)*unit)/1e9).toFixed(6)+'s';
  });
  plot.addEventListener('dblclick',function(){x=0;w=W;draw();});
  draw();
  ch.setAttribute('data-zoom','ready');
});
})();
`
