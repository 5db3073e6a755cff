"""Stage 6, acceptance (paper Sec. VI, VII, Appendix D-E, D-G, D-H): the all-pose PD audit
(`audit`), its certified version over the continuous box (`certified`), the rescue SDP and
Algorithm 1's audit-rescue-re-audit (`rescue`), what an infeasible model does
(`consequences`), and the parameter clouds and the representative candidate (`selection`)."""
