
?
aPlaceholder*
dtype0* 
shape:ÿÿÿÿÿÿÿÿÿ
?
bPlaceholder*
dtype0* 
shape:ÿÿÿÿÿÿÿÿÿ
J
einsum/EinsumEinsumab*
N*
T0*
equationbij,bjk->bk
*
summedIdentityeinsum/Einsum*
T0
E
einsum_1/EinsumEinsuma*
N*
T0*
equation	bij->bj
.
row_sumsIdentityeinsum_1/Einsum*
T0"ª