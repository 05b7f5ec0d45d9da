package kernel

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// RegressionSeed is one file of seeds/: a seed that once failed.
type RegressionSeed struct {
	File     string
	Test     string // the randomized test that found it
	Seed     uint64
	Flags    []string // vopr flags it needs besides -seed
	Commit   string
	Scenario string
	Why      string
}

// ReadSeeds reads every *.seed file of dir whose test is test, sorted by
// file name.
func ReadSeeds(dir, test string) ([]RegressionSeed, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.seed"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var seeds []RegressionSeed
	for _, p := range paths {
		s, err := readSeed(p)
		if err != nil {
			return nil, err
		}
		if s.Test == test {
			seeds = append(seeds, s)
		}
	}
	return seeds, nil
}

func readSeed(path string) (RegressionSeed, error) {
	f, err := os.Open(path)
	if err != nil {
		return RegressionSeed{}, err
	}
	defer f.Close()
	s := RegressionSeed{File: filepath.Base(path)}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, value, ok := strings.Cut(text, ":")
		if !ok {
			return s, fmt.Errorf("%s:%d: want `key: value`", path, line)
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		seen[key] = true
		switch key {
		case "test":
			s.Test = value
		case "seed":
			if s.Seed, err = strconv.ParseUint(value, 10, 64); err != nil {
				return s, fmt.Errorf("%s:%d: seed: %v", path, line, err)
			}
		case "flags":
			s.Flags = strings.Fields(value)
		case "commit":
			s.Commit = value
		case "scenario":
			s.Scenario = value
		case "why":
			s.Why = value
		default:
			return s, fmt.Errorf("%s:%d: unknown key %q", path, line, key)
		}
	}
	for _, k := range []string{"test", "seed", "commit", "why"} {
		if !seen[k] {
			return s, fmt.Errorf("%s: no %q line", path, k)
		}
	}
	return s, sc.Err()
}
