package refmodel

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// parseHumantime reads a duration the way Iggy does (client-ops.md 1.8:
// message_expiry as "String humantime"; Iggy parses it with the humantime
// crate, version 2.4.0): one or more terms "<number><unit>", where a number
// is ASCII digits with an optional fraction after '.', spaces may stand
// between digits, between a number and its unit and between terms, and a
// term may follow the previous unit directly ("1h30m"). Units: ns nsec
// nanos; us usec µs; ms msec millis; s sec secs second seconds; m min mins
// minute minutes; h hr hrs hour hours; d day days; w wk wks week weeks; M
// month months (30.44 days); y yr yrs year years (365.25 days). A fraction
// must come out as whole nanoseconds (whole seconds for hours and longer)
// and is refused on nanoseconds. Overflow fails. The text "0" alone is
// zero. It returns whole seconds and the nanoseconds below a second.
func parseHumantime(s string) (secs uint64, nanos uint32, ok bool) {
	if s == "0" {
		return 0, 0, true
	}
	p := humanParser{src: s}
	d, ok := p.parse()
	return d.secs, d.nanos, ok
}

type duration struct {
	secs  uint64
	nanos uint32
}

type humanParser struct {
	src string
	at  int // byte offset of the next rune
}

// next returns the next rune and advances; ok is false at the end.
func (p *humanParser) next() (rune, bool) {
	if p.at >= len(p.src) {
		return 0, false
	}
	r, n := utf8.DecodeRuneInString(p.src[p.at:])
	p.at += n
	return r, true
}

// isUnitRune: the characters of a unit (ASCII letters and the micro sign).
func isUnitRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '\u00b5'
}

// firstDigit skips whitespace and reads the first digit of a number: ok
// false on another character, found false at the end of the text.
func (p *humanParser) firstDigit() (digit uint64, found, ok bool) {
	for {
		r, more := p.next()
		switch {
		case !more:
			return 0, false, true
		case '0' <= r && r <= '9':
			return uint64(r - '0'), true, true
		case unicode.IsSpace(r):
		default:
			return 0, false, false
		}
	}
}

type fraction struct{ num, den uint64 }

func (p *humanParser) parse() (duration, bool) {
	n, found, ok := p.firstDigit()
	if !ok || !found {
		return duration{}, false // a non-digit first, or the empty text
	}
	var out duration
	for {
		// The integer part and perhaps a fraction, up to the unit.
		var frac *fraction
		unitStart := len(p.src)
	number:
		for {
			at := p.at
			r, more := p.next()
			if !more {
				break
			}
			switch {
			case '0' <= r && r <= '9':
				hi, lo := bits.Mul64(n, 10)
				sum, carry := bits.Add64(lo, uint64(r-'0'), 0)
				if hi != 0 || carry != 0 {
					return duration{}, false
				}
				n = sum
			case unicode.IsSpace(r):
			case isUnitRune(r):
				unitStart = at
				break number
			case r == '.':
				f, start, ok := p.fraction()
				if !ok {
					return duration{}, false
				}
				frac, unitStart = &f, start
				break number
			default:
				return duration{}, false
			}
		}
		// The unit: letters up to a digit (the next term), whitespace or
		// the end.
		unitEnd := len(p.src)
		nextTerm := false
		if unitStart < len(p.src) {
		unit:
			for {
				at := p.at
				r, more := p.next()
				if !more {
					break
				}
				switch {
				case '0' <= r && r <= '9':
					unitEnd, nextTerm = at, true
					if !addUnit(&out, n, frac, p.src[unitStart:unitEnd]) {
						return duration{}, false
					}
					n = uint64(r - '0')
					break unit
				case unicode.IsSpace(r):
					unitEnd = at
					break unit
				case isUnitRune(r):
				default:
					return duration{}, false
				}
			}
		}
		if nextTerm {
			continue
		}
		if !addUnit(&out, n, frac, p.src[unitStart:unitEnd]) {
			return duration{}, false
		}
		n, found, ok = p.firstDigit()
		if !ok {
			return duration{}, false
		}
		if !found {
			return out, true
		}
	}
}

// fraction reads the digits after '.', up to and including the first unit
// character; start is that character's offset (the end of the text when
// there is none). Whitespace between the digits is skipped. At least one
// digit is required.
func (p *humanParser) fraction() (f fraction, start int, ok bool) {
	f = fraction{num: 0, den: 1}
	zeros := true // only zeros so far: they scale the denominator alone
	start = len(p.src)
	for {
		at := p.at
		r, more := p.next()
		if !more {
			break
		}
		switch {
		case '0' <= r && r <= '9':
			var ok1, ok2 bool
			f.den, ok1 = mul(f.den, 10)
			if r != '0' || !zeros {
				f.num, ok2 = mul(f.num, 10)
				if !ok2 {
					return f, 0, false
				}
				f.num, ok2 = add(f.num, uint64(r-'0'))
				if !ok2 {
					return f, 0, false
				}
			}
			if r != '0' {
				zeros = false
			}
			if !ok1 {
				return f, 0, false
			}
		case unicode.IsSpace(r):
		case isUnitRune(r):
			start = at
			return f, start, f.den != 1
		default:
			return f, 0, false
		}
	}
	return f, start, f.den != 1
}

func mul(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0
}

func add(a, b uint64) (uint64, bool) {
	s, c := bits.Add64(a, b, 0)
	return s, c == 0
}

// div divides exactly: a remainder is a loss of precision, which humantime
// refuses.
func div(a, b uint64) (uint64, bool) {
	return a / b, a%b == 0
}

// unitOf returns the length of a unit: seconds for whole-second units,
// nanoseconds for the sub-second ones.
func unitOf(unit string) (secs, nanos uint64, ok bool) {
	switch unit {
	case "nanos", "nsec", "ns":
		return 0, 1, true
	case "usec", "us", "\u00b5s":
		return 0, 1000, true
	case "millis", "msec", "ms":
		return 0, 1_000_000, true
	case "seconds", "second", "secs", "sec", "s":
		return 1, 0, true
	case "minutes", "minute", "min", "mins", "m":
		return 60, 0, true
	case "hours", "hour", "hr", "hrs", "h":
		return 3600, 0, true
	case "days", "day", "d":
		return 86400, 0, true
	case "weeks", "week", "wk", "wks", "w":
		return 7 * 86400, 0, true
	case "months", "month", "M":
		return 2_630_016, 0, true // 30.44 days
	case "years", "year", "yr", "yrs", "y":
		return 31_557_600, 0, true // 365.25 days
	}
	return 0, 0, false
}

// addUnit adds n units, and the fraction of a unit, to out.
func addUnit(out *duration, n uint64, frac *fraction, unit string) bool {
	unitSecs, unitNanos, known := unitOf(unit)
	if !known {
		return false
	}
	var secs, nanos uint64
	var ok bool
	if unitNanos != 0 {
		nanos, ok = mul(n, unitNanos)
	} else {
		secs, ok = mul(n, unitSecs)
	}
	if !ok || !addTo(out, secs, nanos) {
		return false
	}
	if frac == nil {
		return true
	}
	// The fraction: in nanoseconds up to minutes, in whole seconds above.
	secs, nanos = 0, 0
	switch {
	case unitNanos == 1:
		return false // below a nanosecond
	case unitNanos != 0:
		nanos, ok = scaleFraction(*frac, unitNanos)
	case unitSecs <= 60:
		nanos, ok = scaleFraction(*frac, unitSecs*1_000_000_000)
	default:
		secs, ok = scaleFraction(*frac, unitSecs)
	}
	return ok && addTo(out, secs, nanos)
}

func scaleFraction(f fraction, scale uint64) (uint64, bool) {
	v, ok := mul(f.num, scale)
	if !ok {
		return 0, false
	}
	return div(v, f.den)
}

// addTo adds secs and nanos to out, carrying whole seconds out of nanos.
func addTo(out *duration, secs, nanos uint64) bool {
	total, ok := add(uint64(out.nanos), nanos)
	if !ok {
		return false
	}
	if total >= 1_000_000_000 {
		if secs, ok = add(secs, total/1_000_000_000); !ok {
			return false
		}
		total %= 1_000_000_000
	}
	if secs, ok = add(out.secs, secs); !ok {
		return false
	}
	out.secs, out.nanos = secs, uint32(total)
	return true
}
