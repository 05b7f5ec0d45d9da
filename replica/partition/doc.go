// Package partition is one partition's plane on one replica
// (partition-plane.md): the admission of its client requests (SendMessages'
// routing prefix and batch, consumer offsets), the stamping a primary does
// at journal append and the check a backup makes before it journals, and,
// as they land, the committed segment log, consumer offsets and polls. The
// consensus is replica/vsr's, driven through vsr.Plane and
// vsr.StateMachine; this package decides what a partition prepare holds.
//
// Nothing here is shared with the checker, which models the partition plane
// from the spec on its own (DESIGN.md, "checker").
package partition
