"""What every REST endpoint shares, below the apps: the one exception handler and strict input
(`base`), bounded JSON bodies (`bounded_json`) and the error statuses of the schema (`schema`)."""
