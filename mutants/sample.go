package mutants

import (
	"hash/fnv"
	"math/rand/v2"
	"sort"
)

// Sample draws n of the mutants (all of them when n is 0 or at least
// their number), spread over their packages in proportion to the mutants
// each has, with every package that has any given at least one while n
// allows: largest remainders first, ties to the package first in order.
// Within a package the draw comes from the seed and the package's name
// alone, so one package's sample does not move when another changes.
// The result is in the census's order.
func Sample(all []Mutant, n int, seed uint64) []Mutant {
	if n <= 0 || n >= len(all) {
		return append([]Mutant(nil), all...)
	}
	var pkgs []string
	byPkg := map[string][]int{}
	for i, m := range all {
		if _, ok := byPkg[m.Pkg]; !ok {
			pkgs = append(pkgs, m.Pkg)
		}
		byPkg[m.Pkg] = append(byPkg[m.Pkg], i)
	}
	sort.Strings(pkgs)
	quota := allocate(pkgs, byPkg, n, len(all))
	var picked []int
	for _, p := range pkgs {
		idx := append([]int(nil), byPkg[p]...)
		rng := rand.New(rand.NewPCG(seed, nameHash(p)))
		k := quota[p]
		for i := 0; i < k; i++ { // a partial Fisher-Yates shuffle
			j := i + rng.IntN(len(idx)-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		picked = append(picked, idx[:k]...)
	}
	sort.Ints(picked)
	out := make([]Mutant, len(picked))
	for i, j := range picked {
		out[i] = all[j]
	}
	return out
}

// allocate splits n among the packages: one each first (in order, while n
// lasts), then the rest by largest remainder of each one's share.
func allocate(pkgs []string, byPkg map[string][]int, n, total int) map[string]int {
	quota := map[string]int{}
	left := n
	for _, p := range pkgs {
		if left == 0 {
			break
		}
		quota[p] = 1
		left--
	}
	if left == 0 {
		return quota
	}
	type share struct {
		pkg  string
		rest int64 // the fractional part, in units of 1/total
	}
	var shares []share
	given := 0
	for _, p := range pkgs {
		want := int64(len(byPkg[p])) * int64(n)
		whole := int(want / int64(total))
		extra := max(0, min(whole-quota[p], len(byPkg[p])-quota[p]))
		extra = min(extra, left-given)
		quota[p] += extra
		given += extra
		shares = append(shares, share{p, want % int64(total)})
	}
	sort.SliceStable(shares, func(i, j int) bool { return shares[i].rest > shares[j].rest })
	for left-given > 0 {
		progressed := false
		for _, s := range shares {
			if left-given == 0 {
				break
			}
			if quota[s.pkg] < len(byPkg[s.pkg]) {
				quota[s.pkg]++
				given++
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	return quota
}

func nameHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
