"""A game's own question, above the route solvers (18Cuba, 18XS, 18C2C's proof)."""
