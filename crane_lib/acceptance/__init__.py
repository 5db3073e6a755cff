"""Stage 6, acceptance (paper Sec. VI, VII, Appendix D-E, D-G, D-H): the all-pose PD audit
(`audit`), its certified version over the continuous box (`certified`), the rescue SDP and
Algorithm 1's audit-rescue-re-audit (`rescue`), what an infeasible model does
(`consequences`), the parameter clouds and the representative candidate (`selection`), the
held-out score and data set (`held_out`), and the nonideality study's records (`nonideality`)."""
