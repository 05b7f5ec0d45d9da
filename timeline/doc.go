// Package timeline turns one run of the simulator into a picture of it: a
// self-contained HTML page (vopr timeline -o FILE) and a Chrome trace-event
// JSON file that Perfetto opens (-perfetto FILE).
//
// A Recorder is the run's trace writer (sim.Outputs.Trace: the JSON lines
// of sim/trace.go) and its frame tap (sim.Outputs.Frames). It reads the
// lines as they stream and keeps two things, both bounded whatever the
// run's length, since a 10 M-tick run traces gigabytes:
//
//   - the overview: the whole run in at most Options.Buckets buckets of
//     equal width per lane (the width doubles, and neighbours merge, when
//     the run outgrows them), each keeping the min, max and last of a
//     replica's view, log_view, op and commit, the statuses it was seen
//     in, and counts of what happened (crashes, requests, faults);
//   - the detail window: the last Options.Events events and Options.Frames
//     frames before the run ended (a failing run ends at its violation),
//     every one kept, with each lane's state where the window begins.
//
// Finish adds the run's result (the violation, when it was found, its
// evidence) and gives the Timeline, which WriteHTML and WritePerfetto
// render. The page draws the lanes as SVG in its markup, readable with
// scripts off; a small inline script adds zoom and pan. Nothing here reads
// a clock or iterates a map into output: the same run gives the same page.
//
// A Sweep (the -likelihood file of vopr branch -sweep) adds a lane above
// the replicas: the share of branches from each point of the run that
// failed, and failed with the run's own violation.
package timeline
