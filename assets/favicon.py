"""Draws assets/favicon.ico (a red pushpin on a cork square, 32x32 PNG in an ICO) with the
standard library alone: python3 assets/favicon.py, from the repository root."""
import zlib, struct, math
N=32; S=4
def cover(fn, x, y):
    c=0
    for i in range(S):
        for j in range(S):
            if fn(x+(i+.5)/S, y+(j+.5)/S): c+=1
    return c/(S*S)
def rrect(px,py, x0=1,y0=1,x1=31,y1=31,r=6):
    cx=min(max(px,x0+r),x1-r); cy=min(max(py,y0+r),y1-r)
    return (px-cx)**2+(py-cy)**2<=r*r and x0<=px<=x1 and y0<=py<=y1
def circle(cx,cy,r): return lambda px,py:(px-cx)**2+(py-cy)**2<=r*r
def needle(px,py): return abs((px-16)-(py-22)*-0.0)<=1.0 and 18<=py<=27
layers=[(rrect,(183,131,79)),(lambda px,py: rrect(px,py,4,4,28,28,4),(203,155,104)),
        (needle,(55,55,60)),(circle(16,13,7.5),(185,28,28)),(circle(13.5,10.5,2.4),(248,113,113))]
rows=[]
for y in range(N):
    row=b'\x00'
    for x in range(N):
        r=g=b=0.0; a=0.0
        for fn,col in layers:
            k=cover(fn,x,y)
            if k==0: continue
            # over compositing
            na=k+a*(1-k)
            r=(col[0]*k+r*a*(1-k))/na; g=(col[1]*k+g*a*(1-k))/na; b=(col[2]*k+b*a*(1-k))/na; a=na
        row+=bytes([int(r),int(g),int(b),int(round(a*255))])
    rows.append(row)
raw=b''.join(rows)
def chunk(t,d): return struct.pack('>I',len(d))+t+d+struct.pack('>I',zlib.crc32(t+d)&0xffffffff)
png=b'\x89PNG\r\n\x1a\n'+chunk(b'IHDR',struct.pack('>IIBBBBB',N,N,8,6,0,0,0))+chunk(b'IDAT',zlib.compress(raw,9))+chunk(b'IEND',b'')
ico=struct.pack('<HHH',0,1,1)+struct.pack('<BBBBHHII',N,N,0,0,1,32,len(png),22)+png
open("assets/favicon.ico", "wb").write(ico)

