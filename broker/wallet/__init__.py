"""The members' money (issue 32 §2): prepaid credit and packages of table hours or lessons, every change a row."""
