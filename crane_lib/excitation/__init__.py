"""Stage 2, excitation (paper Sec. V, Appendix B): the command-file format and its 4-1-4
interpolation (`commands`), and the design of the 40 identification trajectories and V01-V03
from their blocks (`design`, Tables XIII-XV)."""
