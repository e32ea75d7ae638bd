-- Weather then clothing advice (seed 6.1): the weather service's table.
CREATE TABLE weather (city TEXT, date TEXT, condition TEXT, temp_c REAL, PRIMARY KEY (city, date));
INSERT INTO weather VALUES ('Oslo', '2024-06-03', 'rain', 9.5), ('Madrid', '2024-06-03', 'sunny', 31.0);
-- What the user asked for, as the session knows it: the forecast must be for this city and date.
CREATE TABLE request (city TEXT NOT NULL, date TEXT NOT NULL);
INSERT INTO request VALUES ('Oslo', '2024-06-03');
