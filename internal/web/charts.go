package web

import (
	"fmt"
	"math"
	"strconv"
)

// Charts are drawn on the server as SVG: the page needs no script and no chart library, and
// each chart comes with its numbers as a table for screen readers and for copying.

// barChart is a horizontal bar chart: one labelled bar per row.
type barChart struct {
	Width, Height int
	Bars          []bar
	// LabelWidth is the room left of the bars for their labels.
	LabelWidth int
}

type bar struct {
	Label       string
	Value       *int64
	Text        string // the value as shown ("—" when unknown)
	X, Y, W, H  int
	TextX       int
	TextY       int
	LabelY      int
	Unavailable bool
}

// newBarChart lays out rows of (label, value); a nil value is a figure the platform does not
// give, drawn as no bar and written "not reported", never as zero.
func newBarChart(labels []string, values []*int64, format func(int64) string) barChart {
	const rowH, barH, width, labelW, valueW = 34, 20, 640, 120, 110
	c := barChart{Width: width, Height: rowH*len(labels) + 8, LabelWidth: labelW}
	var top int64
	for _, v := range values {
		if v != nil && *v > top {
			top = *v
		}
	}
	room := width - labelW - valueW
	for i, l := range labels {
		b := bar{Label: l, Value: values[i], X: labelW, Y: 4 + i*rowH + (rowH-barH)/2, H: barH, LabelY: 4 + i*rowH + rowH/2 + 5}
		b.TextY = b.LabelY
		if values[i] == nil {
			b.Text, b.Unavailable, b.TextX = "not reported", true, labelW+6
		} else {
			if top > 0 {
				b.W = int(math.Round(float64(*values[i]) / float64(top) * float64(room)))
			}
			b.Text, b.TextX = format(*values[i]), labelW+b.W+6
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// columnChart is a column chart over days.
type columnChart struct {
	Width, Height int
	Columns       []column
	// Top is the value of the top gridline; TopText it written out; AxisY the baseline.
	Top     int64
	TopText string
	AxisY   int
	Left    int
	Right   int
	Ticks   []tick
	Empty   bool
}

type column struct {
	Label      string // the day, for the table and the tooltip
	Value      *int64
	Text       string
	X, Y, W, H int
}

type tick struct {
	X    int
	Text string
}

// newColumnChart lays out one column per day.
func newColumnChart(days []string, values []*int64, format func(int64) string) columnChart {
	const width, height, left, right, top, bottom = 640, 220, 56, 8, 12, 28
	c := columnChart{Width: width, Height: height, AxisY: height - bottom, Left: left, Right: width - right}
	var most int64
	for _, v := range values {
		if v != nil && *v > most {
			most = *v
		}
	}
	c.Empty = most == 0
	c.Top = niceCeil(most)
	c.TopText = format(c.Top)
	n := max(len(days), 1)
	slot := float64(width-left-right) / float64(n)
	w := max(int(slot*0.7), 1)
	every := max(1, int(math.Ceil(float64(n)/8)))
	for i, d := range days {
		x := left + int(float64(i)*slot+(slot-float64(w))/2)
		col := column{Label: d, Value: values[i], Text: "not reported", X: x, W: w}
		if v := values[i]; v != nil {
			col.Text = format(*v)
			if c.Top > 0 {
				col.H = int(math.Round(float64(*v) / float64(c.Top) * float64(height-top-bottom)))
			}
		}
		col.Y = c.AxisY - col.H
		c.Columns = append(c.Columns, col)
		if i%every == 0 {
			c.Ticks = append(c.Ticks, tick{X: x + w/2, Text: d[5:]})
		}
	}
	return c
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten.
func niceCeil(n int64) int64 {
	if n <= 0 {
		return 1
	}
	p := int64(1)
	for p*10 <= n {
		p *= 10
	}
	for _, m := range []int64{1, 2, 5, 10} {
		if m*p >= n {
			return m * p
		}
	}
	return 10 * p
}

// formatCount writes a count with thousands separators.
func formatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// formatDuration writes seconds of watch time as hours and minutes.
func formatDuration(sec int64) string {
	switch {
	case sec >= 3600:
		return fmt.Sprintf("%d h %02d min", sec/3600, sec%3600/60)
	case sec >= 60:
		return fmt.Sprintf("%d min %02d s", sec/60, sec%60)
	default:
		return fmt.Sprintf("%d s", sec)
	}
}
