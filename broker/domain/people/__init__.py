"""The members' pure rules: membership (the fee year, eligibility) and the member file."""
