// Package sim is the world the replicas live in, assembled: the cluster
// harness that builds real replicas on simulated devices and a simulated
// network, drives them with the deterministic kernel (sim/kernel), crashes and
// restarts them, runs clients against them and checks what they commit
// (../shared/DESIGN.md, rooms "sim" and "Phases").
package sim
