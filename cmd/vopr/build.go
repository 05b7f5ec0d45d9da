package main

import (
	"bytes"
	"runtime/debug"
)

// buildInfo describes the build that runs: it is part of a run's output
// (the header, -json, -version), because the same seed gives the same run
// only on the same build. It is per build, not per run, so stdout stays
// deterministic for a given binary.
type buildInfo struct {
	module    string // the main module's path
	version   string // its version: a tag, a pseudo-version, or (devel)
	revision  string // vcs.revision, the commit it was built from
	modified  string // vcs.modified: true when the tree had changes
	goVersion string
}

// readBuild reads the build's description through read (debug.ReadBuildInfo).
// What the build does not record reads "unknown": `go build` in a git
// checkout records the revision and whether the tree was modified, `go
// test` and `go run` builds do not.
func readBuild(read func() (*debug.BuildInfo, bool)) buildInfo {
	b := buildInfo{module: "unknown", version: "unknown", revision: "unknown", modified: "unknown", goVersion: "unknown"}
	if read == nil {
		return b
	}
	info, ok := read()
	if !ok || info == nil {
		return b
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&b.module, info.Main.Path)
	set(&b.version, info.Main.Version)
	set(&b.goVersion, info.GoVersion)
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			set(&b.revision, s.Value)
		case "vcs.modified":
			set(&b.modified, s.Value)
		}
	}
	return b
}

// words is the build as key=value words: version, revision, modified, go.
func (b *buildInfo) words() string {
	return "version=" + b.version + " revision=" + b.revision + " modified=" + b.modified + " go=" + b.goVersion
}

// writeBuild writes the header's build line.
func writeBuild(buf *bytes.Buffer, b *buildInfo) {
	buf.WriteString("build " + b.words() + "\n")
}
