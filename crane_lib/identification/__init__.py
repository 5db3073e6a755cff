"""Stage 5, identification (paper Sec. IV, Algorithm 1): OLS by QR (`ols`), one condition's
routing test and conditional projection (`condition`, `projection`), the nested model classes
(`model_classes`, Table III), CLIE and DIDIM (`clie`, `clie_core`, `refinement`), and the
held-out prediction metrics (`metrics`)."""
