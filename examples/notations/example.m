% One problem, five notations — MATLAB / Octave.
% What to look at: rows separated by `;` or by new lines, `-Inf`, and a cell array of tokens
% give exactly the matrices of the other four files.
% attention: name="One problem, five notations"
tokens = {'the', 'cat', 'sat'};

X = [1 0 1 0; 0 2 0 1; 1 1 0.5 0];

W_Q = [0.5  0
       0    1
       1    0
       0   -1];
W_K = [1 0; 0 0.5; 0 1; 1 0];
W_V = [1, 2; 0, 1; -1, 0; 2, 0];

M = [0 -Inf -Inf
     0  0   -Inf
     0  0    0];
