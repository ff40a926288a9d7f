//! Board geometry: squares, directions and the board size.
//!
//! Every square lives in one fixed, padded cell array of `STRIDE` columns with a border of
//! off-board cells around the largest board. That makes a `Square` independent of the board
//! size (`d4` is the same value on 7x7 and 19x19), makes the four direction offsets constants,
//! and lets move generation walk rays until it meets a non-empty cell without bounds checks.
//! The only board-size-dependent value is [`Geometry`].

use crate::parse_error::{ParseError, ParseKind};
use std::fmt;
use std::str::FromStr;

/// The smallest board tafl-lab accepts.
pub const MIN_SIZE: u8 = 7;
/// The largest board tafl-lab accepts (Alea Evangelii).
pub const MAX_SIZE: u8 = 19;
/// Row stride of the padded cell array; a power of two so file and rank are shifts and masks.
pub const STRIDE: usize = 32;
/// Number of cells in the padded array: one border row below and above the largest board.
pub const CELLS: usize = STRIDE * (MAX_SIZE as usize + 2);

/// A square on the board, stored as its padded cell index.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Square(u16);

impl Square {
    /// The square at `file` (0 = a) and `rank` (0 = rank 1).
    ///
    /// # Panics
    /// Panics if `file` or `rank` is not below [`MAX_SIZE`].
    pub const fn new(file: u8, rank: u8) -> Square {
        assert!(file < MAX_SIZE && rank < MAX_SIZE, "square outside the largest board");
        Square(((rank as usize + 1) * STRIDE + file as usize + 1) as u16)
    }
    /// File index, 0 for `a`.
    #[inline]
    pub const fn file(self) -> u8 {
        (self.0 as usize % STRIDE) as u8 - 1
    }
    /// Rank index, 0 for rank 1.
    #[inline]
    pub const fn rank(self) -> u8 {
        (self.0 as usize / STRIDE) as u8 - 1
    }
    /// The padded cell index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// The square of a padded cell index; the caller guarantees it is on some board.
    #[inline]
    pub(crate) const fn from_index(index: usize) -> Square {
        Square(index as u16)
    }
    /// The neighbouring cell in direction `d` (it may be off the board: check with the geometry
    /// or the cell contents).
    #[inline]
    pub(crate) const fn step(self, d: Direction) -> usize {
        (self.0 as isize + d.offset()) as usize
    }
    /// Parses `a1` style coordinates without checking them against a board size.
    fn parse_coords(s: &str) -> Option<Square> {
        let mut chars = s.chars();
        let letter = chars.next()?;
        if !letter.is_ascii_lowercase() {
            return None;
        }
        let file = letter as u32 - 'a' as u32;
        let digits = chars.as_str();
        if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let rank: u32 = digits.parse().ok()?;
        if rank == 0 || file >= MAX_SIZE as u32 || rank > MAX_SIZE as u32 {
            return None;
        }
        Some(Square::new(file as u8, (rank - 1) as u8))
    }
}

impl Ord for Square {
    /// Squares sort by file, then rank: `a1 < a2 < ... < b1`, as people sort them.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.file(), self.rank()).cmp(&(other.file(), other.rank()))
    }
}
impl PartialOrd for Square {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank() + 1)
    }
}
impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The error of a square name that is not `a1`..`s19`: a [`ParseError`] of kind
/// [`ParseKind::Square`], kept under its old name.
pub type ParseSquareError = ParseError;

impl FromStr for Square {
    type Err = ParseError;
    /// Parses `a1`..`s19`.
    ///
    /// # Errors
    /// A [`ParseKind::Square`] error naming the text.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Square::parse_coords(s)
            .ok_or_else(|| ParseError::new(ParseKind::Square, s, format!("bad square `{s}` (expected a file letter and a rank number, e.g. d4)")))
    }
}

impl serde::Serialize for Square {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
impl<'de> serde::Deserialize<'de> for Square {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One of the four orthogonal directions. Their order is part of the network's policy layout.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    North,
    East,
    South,
    West,
}

impl Direction {
    /// All directions in policy order.
    pub const ALL: [Direction; 4] = [Direction::North, Direction::East, Direction::South, Direction::West];

    /// Cell-index offset of one step.
    #[inline]
    pub const fn offset(self) -> isize {
        match self {
            Direction::North => STRIDE as isize,
            Direction::East => 1,
            Direction::South => -(STRIDE as isize),
            Direction::West => -1,
        }
    }
    /// (file, rank) change of one step.
    #[inline]
    pub const fn vector(self) -> (i32, i32) {
        match self {
            Direction::North => (0, 1),
            Direction::East => (1, 0),
            Direction::South => (0, -1),
            Direction::West => (-1, 0),
        }
    }
    /// The direction pointing the other way.
    #[inline]
    pub const fn opposite(self) -> Direction {
        match self {
            Direction::North => Direction::South,
            Direction::East => Direction::West,
            Direction::South => Direction::North,
            Direction::West => Direction::East,
        }
    }
    /// Index in [`Direction::ALL`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// The board size and everything derived from it alone.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    size: u8,
}

impl Geometry {
    /// A square board of `size` x `size`.
    ///
    /// # Errors
    /// Sizes outside 7..=19 and even sizes (no centre square) are refused with a
    /// [`ParseKind::BoardSize`] error giving the reason.
    pub fn new(size: u8) -> Result<Geometry, ParseError> {
        let bad = |m: String| ParseError::new(ParseKind::BoardSize, &size.to_string(), m);
        if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
            return Err(bad(format!("board size {size} is outside {MIN_SIZE}..={MAX_SIZE}")));
        }
        if size % 2 == 0 {
            return Err(bad(format!("board size {size} is even; tafl boards have a centre square")));
        }
        Ok(Geometry { size })
    }
    /// Side length.
    #[inline]
    pub const fn size(self) -> u8 {
        self.size
    }
    /// Number of squares.
    pub const fn num_squares(self) -> usize {
        self.size as usize * self.size as usize
    }
    /// The centre square (the throne, where the variant has one).
    pub const fn center(self) -> Square {
        Square::new(self.size / 2, self.size / 2)
    }
    /// Whether a file/rank pair lies on this board.
    pub const fn contains(self, file: i32, rank: i32) -> bool {
        file >= 0 && rank >= 0 && file < self.size as i32 && rank < self.size as i32
    }
    /// Whether `sq` lies on this board.
    pub const fn on_board(self, sq: Square) -> bool {
        sq.file() < self.size && sq.rank() < self.size
    }
    /// Whether `sq` is on the outermost ring.
    pub const fn is_edge(self, sq: Square) -> bool {
        let m = self.size - 1;
        sq.file() == 0 || sq.rank() == 0 || sq.file() == m || sq.rank() == m
    }
    /// Whether `sq` is one of the four physical corners.
    pub const fn is_corner(self, sq: Square) -> bool {
        let m = self.size - 1;
        (sq.file() == 0 || sq.file() == m) && (sq.rank() == 0 || sq.rank() == m)
    }
    /// Whether `sq` lies in one of the four 2x2 blocks at the corners (Alea Evangelii's corners).
    pub const fn in_corner_block(self, sq: Square) -> bool {
        let m = self.size - 1;
        (sq.file() <= 1 || sq.file() >= m - 1) && (sq.rank() <= 1 || sq.rank() >= m - 1)
    }
    /// All squares, rank 1 first, file a first within a rank.
    pub fn squares(self) -> impl Iterator<Item = Square> {
        let n = self.size;
        (0..n).flat_map(move |r| (0..n).map(move |f| Square::new(f, r)))
    }
    /// Dense index `rank * size + file`, used by encodings outside the rules layer.
    pub const fn dense(self, sq: Square) -> usize {
        sq.rank() as usize * self.size as usize + sq.file() as usize
    }
    /// The inverse of [`Geometry::dense`].
    pub const fn from_dense(self, i: usize) -> Square {
        Square::new((i % self.size as usize) as u8, (i / self.size as usize) as u8)
    }
    /// Parses a square name and checks it lies on this board.
    ///
    /// # Errors
    /// A malformed name or one outside the board, as a [`ParseKind::Square`] error.
    pub fn parse_square(self, s: &str) -> Result<Square, ParseError> {
        let sq: Square = s.parse()?;
        if !self.on_board(sq) {
            return Err(ParseError::new(ParseKind::Square, s, format!("square {s} is off the {0}x{0} board", self.size)));
        }
        Ok(sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_coordinates_round_trip() {
        for f in 0..MAX_SIZE {
            for r in 0..MAX_SIZE {
                let sq = Square::new(f, r);
                assert_eq!((sq.file(), sq.rank()), (f, r));
                assert_eq!(sq.to_string().parse::<Square>().unwrap(), sq);
                assert!(sq.index() < CELLS);
            }
        }
        assert_eq!(Square::new(0, 0).to_string(), "a1");
        assert_eq!(Square::new(18, 18).to_string(), "s19");
    }

    #[test]
    fn geometry_rejects_even_and_out_of_range_sizes() {
        assert!(Geometry::new(8).is_err());
        assert!(Geometry::new(5).is_err());
        assert!(Geometry::new(21).is_err());
        assert!(Geometry::new(11).is_ok());
        let g = Geometry::new(7).unwrap();
        assert!(g.parse_square("h1").is_err());
        assert!(g.is_corner(Square::new(6, 0)));
        assert_eq!(g.center().to_string(), "d4");
    }

    #[test]
    fn bad_square_names_are_refused() {
        for bad in ["", "a", "1a", "a0", "a20", "A1", "a1x", "t1"] {
            assert!(bad.parse::<Square>().is_err(), "{bad}");
        }
    }
}
