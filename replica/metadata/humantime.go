package metadata

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// parseHumantime parses a duration the way the humantime crate 2.4.0 does
// (the version Iggy pins), which Iggy uses for a String message_expiry: the
// text "0", or one or more "<number><unit>" parts, whitespace allowed inside
// and between them, summed. A number may have a fractional part ("1.5h"),
// which must convert to a whole number of nanoseconds for units below an
// hour and of seconds from the hour up, and is refused for nanoseconds.
// Units: nanos nsec ns, usec us µs, millis msec ms, seconds second secs sec
// s, minutes minute mins min m, hours hour hrs hr h, days day d, weeks week
// wks wk w, months month M (30.44 days), years year yrs yr y (365.25 days).
// A number without a unit, an unknown unit, any other character, or an
// overflow of u64 seconds fails (DEVIATIONS.md 57: an older dialect until
// this parser caught up).
func parseHumantime(s string) (secs uint64, nanos uint32, ok bool) {
	if s == "0" {
		return 0, 0, true
	}
	p := humantimeParser{s: s}
	n, found, good := p.firstDigit()
	if !good || !found {
		return 0, 0, false // a character other than a digit first, or no number at all
	}
	for {
		// The number: digits, whitespace between them allowed, then a
		// unit's first letter or a fractional part.
		var frac *humantimeFraction
		unitStart := len(s)
		for {
			at := p.i
			r, have := p.next()
			if !have {
				break
			}
			switch {
			case r >= '0' && r <= '9':
				if n > (math.MaxUint64-uint64(r-'0'))/10 {
					return 0, 0, false
				}
				n = n*10 + uint64(r-'0')
				continue
			case unicode.IsSpace(r):
				continue
			case humantimeLetter(r):
				unitStart = at
			case r == '.':
				f, start, good := p.fraction()
				if !good {
					return 0, 0, false
				}
				frac, unitStart = &f, start
			default:
				return 0, 0, false
			}
			break
		}
		// The unit: letters up to whitespace, a digit (the next part) or
		// the end.
		unitEnd, nextDigit := len(s), -1
		if unitStart < len(s) {
			for {
				at := p.i
				r, have := p.next()
				if !have {
					break
				}
				if r >= '0' && r <= '9' {
					unitEnd, nextDigit = at, int(r-'0')
					break
				}
				if unicode.IsSpace(r) {
					unitEnd = at
					break
				}
				if !humantimeLetter(r) {
					return 0, 0, false
				}
			}
		}
		if !p.add(n, frac, s[min(unitStart, unitEnd):unitEnd]) {
			return 0, 0, false
		}
		if nextDigit >= 0 {
			n = uint64(nextDigit)
			continue
		}
		n, found, good = p.firstDigit()
		if !good {
			return 0, 0, false
		}
		if !found {
			return p.secs, uint32(p.nanos), true
		}
	}
}

// humantimeParser is parseHumantime's position in its text and the sum so
// far (nanos < 1e9).
type humantimeParser struct {
	s           string
	i           int
	secs, nanos uint64
}

// humantimeFraction is a number's fractional part: numerator/denominator,
// the denominator a power of ten.
type humantimeFraction struct{ num, den uint64 }

func humantimeLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == 'µ' }

// next returns the rune at i and advances.
func (p *humantimeParser) next() (rune, bool) {
	if p.i >= len(p.s) {
		return 0, false
	}
	r, size := utf8.DecodeRuneInString(p.s[p.i:])
	p.i += size
	return r, true
}

// firstDigit skips whitespace and returns the first digit (found); any
// other character fails, and the end of the text ends the parse.
func (p *humantimeParser) firstDigit() (n uint64, found, ok bool) {
	for {
		r, have := p.next()
		switch {
		case !have:
			return 0, false, true
		case r >= '0' && r <= '9':
			return uint64(r - '0'), true, true
		case unicode.IsSpace(r):
		default:
			return 0, false, false
		}
	}
}

// fraction reads the digits after a decimal point (whitespace between them
// allowed) up to a unit's first letter, whose position it returns (the end
// of the text if none): at least one digit, or it fails.
func (p *humantimeParser) fraction() (f humantimeFraction, unitStart int, ok bool) {
	f = humantimeFraction{den: 1}
	unitStart = len(p.s)
	leading := true // zeros before the first nonzero digit scale only the denominator
	for {
		at := p.i
		r, have := p.next()
		if !have {
			break
		}
		if r >= '0' && r <= '9' {
			if f.den > math.MaxUint64/10 {
				return f, 0, false
			}
			f.den *= 10
			if r != '0' {
				leading = false
			}
			if !leading {
				if f.num > (math.MaxUint64-uint64(r-'0'))/10 {
					return f, 0, false
				}
				f.num = f.num*10 + uint64(r-'0')
			}
			continue
		}
		if unicode.IsSpace(r) {
			continue
		}
		if humantimeLetter(r) {
			unitStart = at
			break
		}
		return f, 0, false
	}
	return f, unitStart, f.den > 1
}

// add adds n (and its fraction) of unit to the sum.
func (p *humantimeParser) add(n uint64, frac *humantimeFraction, unit string) bool {
	var mulSecs, mulNanos uint64
	switch unit {
	case "nanos", "nsec", "ns":
		mulNanos = 1
	case "usec", "us", "µs":
		mulNanos = 1_000
	case "millis", "msec", "ms":
		mulNanos = 1_000_000
	case "seconds", "second", "secs", "sec", "s":
		mulSecs = 1
	case "minutes", "minute", "min", "mins", "m":
		mulSecs = 60
	case "hours", "hour", "hr", "hrs", "h":
		mulSecs = 3600
	case "days", "day", "d":
		mulSecs = 86_400
	case "weeks", "week", "wk", "wks", "w":
		mulSecs = 604_800
	case "months", "month", "M":
		mulSecs = 2_630_016
	case "years", "year", "yr", "yrs", "y":
		mulSecs = 31_557_600
	default:
		return false
	}
	mul := func(a, b uint64) (uint64, bool) {
		if b != 0 && a > math.MaxUint64/b {
			return 0, false
		}
		return a * b, true
	}
	// The whole part, in seconds or nanoseconds as the unit counts.
	var ds, dn uint64
	var good bool
	if mulSecs != 0 {
		if ds, good = mul(n, mulSecs); !good {
			return false
		}
	} else if dn, good = mul(n, mulNanos); !good {
		return false
	}
	if !p.sum(ds, dn) {
		return false
	}
	if frac == nil {
		return true
	}
	// The fraction: whole nanoseconds below the hour, whole seconds from
	// the hour up; nothing finer than a nanosecond.
	switch {
	case mulNanos == 1:
		return false
	case mulNanos != 0:
		v, good := mul(frac.num, mulNanos)
		if !good || v%frac.den != 0 {
			return false
		}
		return p.sum(0, v/frac.den)
	case mulSecs < 3600:
		v, good := mul(frac.num, mulSecs*1_000_000_000)
		if !good || v%frac.den != 0 {
			return false
		}
		return p.sum(0, v/frac.den)
	default:
		v, good := mul(frac.num, mulSecs)
		if !good || v%frac.den != 0 {
			return false
		}
		return p.sum(v/frac.den, 0)
	}
}

// sum adds ds seconds and dn nanoseconds to the total, carrying whole
// seconds out of the nanoseconds.
func (p *humantimeParser) sum(ds, dn uint64) bool {
	nanos := p.nanos + dn
	if nanos < dn {
		return false
	}
	if nanos >= 1_000_000_000 {
		carry := nanos / 1_000_000_000
		if ds > math.MaxUint64-carry {
			return false
		}
		ds += carry
		nanos %= 1_000_000_000
	}
	if p.secs > math.MaxUint64-ds {
		return false
	}
	p.secs, p.nanos = p.secs+ds, nanos
	return true
}
