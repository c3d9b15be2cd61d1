// The cluster-counts example compiled by nvcc: the same source, with the CUDA backend.
#include "cluster_counts.cpp"
