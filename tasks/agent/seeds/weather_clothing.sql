-- Weather then clothing advice (seed 6.1): the weather service's table.
CREATE TABLE weather (city TEXT, date TEXT, condition TEXT, temp_c REAL, PRIMARY KEY (city, date));
INSERT INTO weather VALUES ('Oslo', '2024-06-03', 'rain', 9.5), ('Madrid', '2024-06-03', 'sunny', 31.0);
-- What the user asked for, as the session knows it: the forecast must be for this city and date.
CREATE TABLE request (city TEXT NOT NULL, date TEXT NOT NULL);
INSERT INTO request VALUES ('Oslo', '2024-06-03');
-- The words that name a weather condition, and what the agent's messages told the user
-- (tasks/agent/weather_clothing.py `read_message`).
CREATE TABLE condition_words (word TEXT PRIMARY KEY, condition TEXT NOT NULL);
INSERT INTO condition_words VALUES
  ('rain', 'rain'), ('rainy', 'rain'), ('raining', 'rain'), ('rains', 'rain'), ('showers', 'rain'), ('drizzle', 'rain'), ('wet', 'rain'),
  ('sun', 'sunny'), ('sunny', 'sunny'), ('sunshine', 'sunny'), ('clear', 'sunny'),
  ('cloud', 'cloudy'), ('cloudy', 'cloudy'), ('clouds', 'cloudy'), ('overcast', 'cloudy'),
  ('snow', 'snow'), ('snowy', 'snow'), ('snowing', 'snow'), ('sleet', 'snow');
CREATE TABLE stated_conditions (message_id INTEGER NOT NULL, condition TEXT NOT NULL);
CREATE TABLE stated_temperatures (message_id INTEGER NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL);
