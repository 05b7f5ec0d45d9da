// Command vopr is a deterministic cluster simulator for Apache Iggy's replica
// plane. This build carries the frame decoder:
//
//	vopr decode [-json] [-hex] [-max-frame N] [FILE]
//
// reads a stream of replica-port frames (from FILE, or stdin) and prints
// every frame. The simulator itself (vopr -seed N) lands with the VOPR.
//
// Exit status: 0 success, 1 a framing or input error, 2 bad usage.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  vopr decode [-json] [-hex] [-max-frame BYTES] [FILE]   print the frames of a replica-port stream

The simulator (vopr -seed N) is not part of this build yet.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "decode" {
		return runDecode(args[1:], stdin, stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprint(stderr, usage)
	return 2
}
