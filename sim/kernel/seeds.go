package kernel

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RegressionSeed is one line of a seeds/ file: a seed that once failed.
type RegressionSeed struct {
	Seed        uint64
	Commit      string
	Description string
}

// ReadSeeds reads a seeds/ file (`seed commit description` per line, `#`
// comments).
func ReadSeeds(path string) ([]RegressionSeed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var seeds []RegressionSeed
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.SplitN(text, " ", 3)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s:%d: want `seed commit description`", path, line)
		}
		seed, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: seed: %v", path, line, err)
		}
		seeds = append(seeds, RegressionSeed{Seed: seed, Commit: fields[1], Description: fields[2]})
	}
	return seeds, sc.Err()
}
