"""The members' money: prepaid credit and packages (hours of table time, lessons); pure rules."""
