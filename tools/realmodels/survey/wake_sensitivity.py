"""Where a wake-word head (Flatten -> Gemm -> LayerNorm -> ReLU -> Gemm -> LayerNorm -> ReLU -> Gemm ->
Sigmoid) loses its score in INT8, by numpy emulation (float64, not q8): the common mode of each
LayerNorm input (row mean/std), and the held-out score shift from each INT8 source alone
(per-channel nearest weights, per-tensor input / ReLU ranges) and from candidate rewrites.
usage: wake_sensitivity.py KEY   (sets from wake_sets.py in $Q8_WAKE_DIR/sets/KEY, default ~/.cache/q8/survey/wake)"""
import onnx, numpy as np, glob, sys, os
from onnx import numpy_helper
K=sys.argv[1]
WW=os.path.expanduser(os.environ.get('Q8_WAKE_DIR','~/.cache/q8/survey/wake'))
SV=os.path.expanduser(os.environ.get('Q8_SURVEY_DIR','~/.cache/q8/survey'))
m=onnx.load(f'{SV}/models/{K}.onnx')
W={t.name:numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}
for n in m.graph.node:
    if n.op_type=='Constant': W[n.output[0]]=numpy_helper.to_array(n.attribute[0].t).astype(np.float64)
print({k:v.shape for k,v in W.items()})
X=np.stack([np.load(f).reshape(-1) for f in sorted(glob.glob(f'{WW}/sets/{K}/heldall/*.npy'))]).astype(np.float64)
def ln(x,g,b,eps):
    mu=x.mean(1,keepdims=True); v=((x-mu)**2).mean(1,keepdims=True); return (x-mu)/np.sqrt(v+eps)*g+b
eps=[v for k,v in W.items() if v.size==1]
print('consts',[(k,float(v)) for k,v in W.items() if v.size==1])
def fwd(X, Wt=W, q=None):
    h1=X@Wt['layer1.weight'].T+Wt['layer1.bias']
    a1=np.maximum(ln(h1,Wt['layernorm1.weight'],Wt['layernorm1.bias'],1e-5),0)
    if q: a1=q(a1)
    h2=a1@Wt['blocks.0.fcn_layer.weight'].T+Wt['blocks.0.fcn_layer.bias']
    a2=np.maximum(ln(h2,Wt['blocks.0.layer_norm.weight'],Wt['blocks.0.layer_norm.bias'],1e-5),0)
    z=a2@Wt['last_layer.weight'].T+Wt['last_layer.bias']
    return z[:,0],h1,a1,h2,a2
z,h1,a1,h2,a2=fwd(X)
s=1/(1+np.exp(-z))
print('logit range',z.min(),z.max(),' X absmax',abs(X).max(),'X per-dim absmax range',abs(X).max(0).min(),abs(X).max(0).max())
for nm,h in (('h1',h1),('h2',h2)):
    mu=h.mean(1); sd=h.std(1)
    print(nm,'absmax',abs(h).max(),'row mean/std median',np.median(abs(mu)/sd),'row std median',np.median(sd), 'min std', sd.min())
print('a1 absmax',a1.max(),'a2 absmax',a2.max(), '|w_last|',np.linalg.norm(W['last_layer.weight']), 'max|w_last|', abs(W['last_layer.weight']).max())
print('LN gains: ln1',abs(W['layernorm1.weight']).max(),'ln2',abs(W['blocks.0.layer_norm.weight']).max(), abs(W['blocks.0.layer_norm.weight']).mean())
# sensitivity experiments: per-channel int8 weights nearest
def qw(w):
    sc=abs(w).max(1,keepdims=True)/127; return np.round(w/sc)*sc
def qa(x,r): sc=r/127; return np.clip(np.round(x/sc),-127,127)*sc
for name,mod in [('W1 int8',{'layer1.weight':qw(W['layer1.weight'])}),('W2 int8',{'blocks.0.fcn_layer.weight':qw(W['blocks.0.fcn_layer.weight'])}),('W3 int8',{'last_layer.weight':qw(W['last_layer.weight'])})]:
    Wt=dict(W); Wt.update(mod); zz=fwd(X,Wt)[0]; print(name,'max score shift',abs(1/(1+np.exp(-zz))-s).max(), 'max logit shift',abs(zz-z).max())
zz=fwd(qa(X,abs(X).max()))[0]; print('X int8 (absmax)','max score shift',abs(1/(1+np.exp(-zz))-s).max())
for r in (a1.max(), 2.57, 0.02027*127):
    zz=fwd(X,q=lambda a: qa(a,r))[0]; print('a1 int8 range',r,'max score shift',abs(1/(1+np.exp(-zz))-s).max())
# full emulation: ranges from new calib absmax
C=np.stack([np.load(f).reshape(-1) for f in sorted(glob.glob(f'{WW}/sets/{K}/calib/*.npy'))]).astype(np.float64)
_,_,ca1,_,_=fwd(C); rx=abs(C).max(); ra=ca1.max()
def emu(W1,b1,W2,b2,xs=None,center=False,qx=True,qa1=True):
    Wt=dict(W)
    if center:
        W1=W1-W1.mean(0,keepdims=True); b1=b1-b1.mean(); W2=W2-W2.mean(0,keepdims=True); b2=b2-b2.mean()
    Xq=X; W1e=W1
    if xs is not None: Xq=X/xs; W1e=W1*xs
    if qx: Xq=qa(Xq, abs(C/ (xs if xs is not None else 1)).max())
    Wt['layer1.weight']=qw(W1e); Wt['layer1.bias']=b1; Wt['blocks.0.fcn_layer.weight']=qw(W2); Wt['blocks.0.fcn_layer.bias']=b2
    zz=fwd(Xq,Wt,q=(lambda a: qa(a,ra)) if qa1 else None)[0]
    return abs(1/(1+np.exp(-zz))-s).max()
W1,b1,W2,b2=W['layer1.weight'],W['layer1.bias'],W['blocks.0.fcn_layer.weight'],W['blocks.0.fcn_layer.bias']
print('emu all int8 (minmax-ish)', emu(W1,b1,W2,b2))
print('emu centered W', emu(W1,b1,W2,b2,center=True))
xs=np.sqrt(abs(C).max(0)/ (abs(C).max(0).mean()))  # smoothquant alpha .5 on input side only
print('emu x per-dim scaled (sqrt)', emu(W1,b1,W2,b2,xs=xs))
print('emu x per-dim scaled (full)', emu(W1,b1,W2,b2,xs=abs(C).max(0)/abs(C).max(0).mean()))
print('emu centered + x scaled', emu(W1,b1,W2,b2,xs=xs,center=True))
print('emu weights only', emu(W1,b1,W2,b2,qx=False,qa1=False), 'centered', emu(W1,b1,W2,b2,qx=False,qa1=False,center=True))
print('emu no x quant', emu(W1,b1,W2,b2,qx=False), 'centered', emu(W1,b1,W2,b2,qx=False,center=True))
print('W1 row-norm of common component / total', np.linalg.norm(W1.mean(0))*8/np.linalg.norm(W1), 'maxabs W1', abs(W1).max(1).mean(),'centered', abs(W1-W1.mean(0)).max(1).mean())
mu=C.mean(0)
def emu2(center_x=True, center_w=False, qa1=True, ra1=None):
    W1e,b1e,W2e,b2e=W1,b1,W2,b2
    if center_w: W1e=W1-W1.mean(0); b1e=b1-b1.mean(); W2e=W2-W2.mean(0); b2e=b2-b2.mean()
    m_=mu if center_x else 0*mu
    Xq=qa(X-m_, abs(C-m_).max())+m_          # == bias += W1 @ mu, int8 on x - mu
    Wt=dict(W); Wt['layer1.weight']=qw(W1e); Wt['layer1.bias']=b1e; Wt['blocks.0.fcn_layer.weight']=qw(W2e); Wt['blocks.0.fcn_layer.bias']=b2e
    zz=fwd(Xq,Wt,q=(lambda a: qa(a,ra1 or ra)) if qa1 else None)[0]
    return round(abs(1/(1+np.exp(-zz))-s).max(),4)
print('X range absmax',round(abs(C).max(),1),'after per-dim mean removal',round(abs(C-mu).max(),1))
print('emu2: x offset folded', emu2(), '+centered W', emu2(center_w=True), '; x offset folded, a1 fp32', emu2(qa1=False), '+centW', emu2(qa1=False,center_w=True), '; baseline', emu2(center_x=False))
