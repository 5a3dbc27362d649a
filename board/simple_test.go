package board

// A deliberately plain second implementation of the rules, in the style of
// the original article: a 10x10 byte array whose border (and, for small
// boards, every square outside the n x n corner) is a sentinel, so walking a
// direction stops at the wall without any coordinate arithmetic. It shares no
// code with the bitboards, so agreement between the two is evidence that
// both are right.

const (
	sEmpty byte = iota
	sBlack
	sWhite
	sWall
)

var simpleDirs = [8]int{-11, -10, -9, -1, 1, 9, 10, 11}

type simple struct {
	cells [100]byte
	side  byte // sBlack or sWhite
}

func simpleIndex(sq int) int { return (sq/8+1)*10 + sq%8 + 1 }

func toSimple(n int, p Position) simple {
	var s simple
	for i := range s.cells {
		s.cells[i] = sWall
	}
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			sq := r*8 + c
			v := sEmpty
			if p.Occ>>sq&1 == 1 {
				v = sBlack
				if p.White>>sq&1 == 1 {
					v = sWhite
				}
			}
			s.cells[simpleIndex(sq)] = v
		}
	}
	s.side = sBlack
	if p.Side == White {
		s.side = sWhite
	}
	return s
}

func (s simple) position() Position {
	var p Position
	for sq := 0; sq < 64; sq++ {
		switch s.cells[simpleIndex(sq)] {
		case sBlack:
			p.Occ |= 1 << sq
		case sWhite:
			p.Occ |= 1 << sq
			p.White |= 1 << sq
		}
	}
	if s.side == sWhite {
		p.Side = White
	}
	return p
}

func other(side byte) byte { return 3 - side }

// flips lists the cells side would flip by playing at i.
func (s *simple) flips(i int, side byte) []int {
	if s.cells[i] != sEmpty {
		return nil
	}
	var all []int
	for _, d := range simpleDirs {
		var run []int
		j := i + d
		for s.cells[j] == other(side) {
			run = append(run, j)
			j += d
		}
		if s.cells[j] == side {
			all = append(all, run...)
		}
	}
	return all
}

func (s *simple) hasMove(side byte) bool {
	for i := range s.cells {
		if len(s.flips(i, side)) > 0 {
			return true
		}
	}
	return false
}

// play places a disc, flips, and hands the turn over unless the opponent
// must pass while the mover can go on.
func (s *simple) play(i int) {
	for _, j := range s.flips(i, s.side) {
		s.cells[j] = s.side
	}
	s.cells[i] = s.side
	if s.hasMove(other(s.side)) || !s.hasMove(s.side) {
		s.side = other(s.side)
	}
}
