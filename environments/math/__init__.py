"""The math environment: CapaBench's algebra/geometry problems with calculator and search."""
